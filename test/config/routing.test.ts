/**
 * Deployments, key pools, fallbacks and the routing policy as configuration (issue 29 items 1-5):
 * each mistake refused at boot, on reload and by codegen with file, line, path and reason; and the
 * defaults and overrides compiled right.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAll } from '../../codegen/generate.js';
import { compileGateway, needsSimulator } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { DEFAULT_ROUTING } from '../../src/config/routing.js';
import type { CompiledGateway } from '../../src/config/types.js';
import type { ProviderManifest } from '../../src/generated/manifest-types.js';
import { catalogBody } from '../../src/server/catalog.js';
import { authHeaders } from '../../src/upstream/auth.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CONTEXT = { env: {}, simulatorUrl: 'http://127.0.0.1:1' };
const FIXTURE = 'providers/fixture.yaml';
const POOL = '{ scheme: bearer, keys: [env:FIXTURE_KEY_A, env:FIXTURE_KEY_B, env:FIXTURE_KEY_C] }';

/**
 * providers/fixture.yaml, line by line (the tests assert these numbers): `auth` on line 4; the
 * offering fx-chat from line 8, its `chat` lines from line 14; then fx-other with its `other` lines.
 */
function fixture(opts: { auth?: string; chat?: string[]; other?: string[] } = {}): string {
  const offering = (id: string, extra: string[]): string[] => [
    `  - id: ${id}`, '    service_type: CHAT', '    availability: available', '    max_output_tokens: 1000', '    context_window: 8000',
    '    billing: { unit: token, per: 1000000, prices: { input: "1", output: "2" } }', ...extra.map((line) => `    ${line}`),
  ];
  return [
    'version: 1', 'id: fixture', 'base_url: { env: FIXTURE_BASE_URL, default: "https://fixture.example/v1" }', `auth: ${opts.auth ?? POOL}`,
    'operations:', '  chat-completions: { method: POST, path: /chat/completions, format: openai-chat, answer: { type: sse } }',
    'offerings:', ...offering('fx-chat', opts.chat ?? []), ...offering('fx-other', opts.other ?? []), '',
  ].join('\n');
}

async function copyWith(text: string): Promise<ConfigCopy> {
  const copy = await copyConfig();
  await copy.write(FIXTURE, text);
  return copy;
}

async function compiled(text = fixture(), env: Record<string, string> = {}): Promise<CompiledGateway> {
  const copy = await copyWith(text);
  return compileGateway(await loadGateway(copy.configFile), { ...CONTEXT, env });
}

async function bootError(copy: ConfigCopy): Promise<unknown> {
  return loadGateway(copy.configFile).then((raw) => compileGateway(raw, CONTEXT)).then(() => null, (e: unknown) => e);
}

interface Refusal { name: string; text: string; file?: string; path: string; line: number; reason: string | RegExp }

/** Each config check of issue 29 item 5, with where and why it is refused. */
const REFUSALS: Refusal[] = [
  {
    name: 'an unknown provider in deployments',
    text: fixture({ chat: ['deployments:', '  - { provider: fixture }', '  - { provider: nowhere, weight: 2 }'] }),
    path: '/offerings/0/deployments/1/provider', line: 16,
    reason: /^unknown provider "nowhere" \(the providers: anthropic, .*fixture, .*openai.*\)$/,
  },
  {
    // cohere serves no chat operation at all (anthropic's messages operation now serves /v1/responses too: issue 31 item 2).
    name: 'a deployment whose provider cannot serve a route the offering is reachable on',
    text: fixture({ chat: ['deployments:', '  - { provider: fixture }', '  - { provider: cohere, upstream_model: rerank-v3.5 }'] }),
    path: '/offerings/0/deployments/1/provider', line: 16,
    reason: 'provider cohere has no operation that serves /v1/chat/completions for this offering (routes/chat-completions.yaml calls: chat-completions, messages, generate-content, converse)',
  },
  {
    name: 'duplicate deployment ids (two defaults alike)',
    text: fixture({ chat: ['deployments:', '  - { provider: openai, weight: 2 }', '  - { provider: openai, priority: 1 }'] }),
    path: '/offerings/0/deployments/1', line: 16,
    reason: 'deployment id "openai/fx-chat" is already used by deployment 0 of this offering (the default id is <provider>/<upstream_model>: name one with `id`)',
  },
  {
    name: 'duplicate deployment ids (named)',
    text: fixture({ chat: ['deployments:', '  - { id: main, provider: fixture }', '  - provider: openai', '    id: main'] }),
    path: '/offerings/0/deployments/1/id', line: 17,
    reason: 'deployment id "main" is already used by deployment 0 of this offering',
  },
  {
    name: 'an unknown fallback id',
    text: fixture({ chat: ['fallbacks: [fx-other]', 'context_window_fallbacks: [gpt-4o, gpt-5-nowhere]'] }),
    path: '/offerings/0/context_window_fallbacks/1', line: 15,
    reason: 'unknown offering "gpt-5-nowhere" (no provider declares it)',
  },
  {
    name: 'a fallback cycle, through two of the lists',
    text: fixture({ chat: ['fallbacks: [gpt-4o-mini, fx-other]'], other: ['context_window_fallbacks: [fx-chat]'] }),
    path: '/offerings/0/fallbacks/1', line: 14,
    reason: 'fallback cycle: fx-chat -> fx-other -> fx-chat',
  },
  {
    name: 'a model that falls back to itself',
    text: fixture({ other: ['content_policy_fallbacks: [fx-other]'] }),
    path: '/offerings/1/content_policy_fallbacks/0', line: 20,
    reason: 'fallback cycle: fx-other -> fx-other',
  },
  {
    name: 'a fallback of another service type',
    text: fixture({ chat: ['fallbacks: [text-embedding-3-small]'] }),
    path: '/offerings/0/fallbacks/0', line: 14,
    reason: 'fallback "text-embedding-3-small" is EMBEDDING and "fx-chat" is CHAT: a fallback must be of the same service type',
  },
  {
    // The value is not echoed: it may be the credential itself.
    name: 'a keys entry that is not an env: location',
    text: fixture({ auth: '{ scheme: bearer, keys: [env:FIXTURE_KEY_A, sk-live-0123456789] }' }),
    path: '/auth/keys/1', line: 4,
    reason: 'must be an env:NAME location (the environment variable holding the credential, e.g. env:OPENAI_API_KEY), never the credential itself',
  },
  {
    name: 'both key and keys',
    text: fixture({ auth: '{ scheme: bearer, key: env:FIXTURE_KEY, keys: [env:FIXTURE_KEY_A] }' }),
    path: '/auth/key', line: 4, reason: '"key" is not allowed here',
  },
  {
    name: 'neither key nor keys',
    text: fixture({ auth: '{ scheme: bearer }' }),
    path: '/auth', line: 4, reason: "must have required property 'key'",
  },
  {
    name: 'an empty key pool',
    text: fixture({ auth: '{ scheme: bearer, keys: [] }' }),
    path: '/auth/keys', line: 4, reason: 'must NOT have fewer than 1 items',
  },
  {
    name: 'an unknown key in an offering\'s routing',
    text: fixture({ chat: ['routing: { max_attempts: 2, retries: 4 }'] }),
    path: '/offerings/0/routing', line: 14, reason: 'unknown key "retries"',
  },
  {
    name: 'an offering\'s backoff whose initial exceeds the (global) max',
    text: fixture({ chat: ['routing:', '  strategy: latency', '  backoff_ms: { initial: 9000 }'] }),
    path: '/offerings/0/routing/backoff_ms', line: 16, reason: 'backoff_ms.initial (9000) is above backoff_ms.max (4000)',
  },
  {
    name: 'an unknown continuation',
    text: fixture({ chat: ['continuation: replay'] }),
    path: '/offerings/0/continuation', line: 14, reason: 'must be equal to one of the allowed values: prefill',
  },
];

function expectRefusal(error: unknown, r: Refusal): void {
  expect(error, r.name).toBeInstanceOf(ManifestError);
  const e = error as ManifestError;
  expect({ file: e.file, path: e.path, line: e.line }, r.name).toEqual({ file: r.file ?? FIXTURE, path: r.path, line: r.line });
  if (typeof r.reason === 'string') expect(e.reason, r.name).toBe(r.reason);
  else expect(e.reason, r.name).toMatch(r.reason);
  expect(e.message).toBe(`${r.file ?? FIXTURE}:${r.line}: ${r.path}: ${e.reason}`);
}

describe('issue 29 config checks at boot and in codegen', () => {
  it('accepts the fixture as it is (so each refusal below is its edit\'s)', async () => {
    const copy = await copyWith(fixture());
    expect(await bootError(copy)).toBeNull();
  });

  for (const r of REFUSALS) {
    it(`refuses ${r.name}, with file, line, path and reason`, async () => {
      const copy = await copyWith(r.text);
      expectRefusal(await bootError(copy), r);
      // codegen (`npm run codegen`, and its --check) compiles the same manifests before writing anything.
      expectRefusal(await generateAll(copy.dir).then(() => null, (e: unknown) => e), r);
    });
  }

  it('refuses a global backoff whose initial exceeds its max, and an unknown routing key, in gateway.config.yaml with their lines', async () => {
    const copy = await copyConfig();
    const text = await readFile(copy.configFile, 'utf8');
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  backoff_ms:')) + 1;
    expect(at).toBeGreaterThan(1);
    await copy.write('gateway.config.yaml', text.replace(/^ {2}backoff_ms: .*$/m, '  backoff_ms: { initial: 5000, max: 1000 }'));
    expect(await bootError(copy)).toMatchObject({ file: 'gateway.config.yaml', path: '/routing/backoff_ms', line: at, reason: 'backoff_ms.initial (5000) is above backoff_ms.max (1000)' });
    await copy.write('gateway.config.yaml', text.replace(/^ {2}backoff_ms: .*$/m, '  backoff_ms: { initial: 100, jitter: none }'));
    expect(await bootError(copy)).toMatchObject({ file: 'gateway.config.yaml', path: '/routing/backoff_ms', line: at, reason: 'unknown key "jitter"' });
    await copy.write('gateway.config.yaml', text.replace(/^ {2}first_token_timeout_ms: .*$/m, '  first_token_timeout_ms: 0'));
    expect(await bootError(copy)).toMatchObject({ path: '/routing/first_token_timeout_ms', reason: 'must be >= 1' });
  });
});

describe('issue 29 config checks on reload', () => {
  let copy: ConfigCopy;
  let t: TestGateway;
  beforeAll(async () => {
    copy = await copyWith(fixture());
    t = await startTestGateway({ configFile: copy.configFile });
  });
  afterAll(async () => { await t?.dispose(); });

  it('refuses each mistake with file, line, path and reason, and the previous configuration keeps serving', async () => {
    const serving = t.gw.generation();
    for (const r of REFUSALS) {
      await copy.write(FIXTURE, r.text);
      expectRefusal(await t.gw.reload(), r);
      expect(t.gw.generation()).toBe(serving);
    }
    await copy.write(FIXTURE, fixture({ chat: ['deployments: [{ provider: openai, upstream_model: gpt-4o-mini }]'] }));
    expect(await t.gw.reload()).toBeNull();
    const [deployment] = t.gw.generation().gateway.offerings.get('fx-chat')!.deployments;
    expect(deployment).toMatchObject({ id: 'openai/gpt-4o-mini', provider: { id: 'openai' }, offering: { id: 'fx-chat', upstreamModel: 'gpt-4o-mini', providerId: 'openai' } });
  });
});

describe('issue 29 config compiled', () => {
  it('compiles the global routing defaults, with or without the shipped routing: block', async () => {
    const defaults = {
      maxAttempts: 3, retrySameDeployment: 1, backoffMs: { initial: 250, max: 4000 }, retryAfterMaxMs: 5000, deadlineMs: 90_000,
      firstTokenTimeoutMs: null, streamIdleTimeoutMs: 30_000, strategy: 'weighted', circuit: { failures: 5, windowSeconds: 30, openSeconds: 30 },
    };
    expect(DEFAULT_ROUTING).toEqual(defaults);
    const shipped = await compiled();
    expect(shipped.settings.routing).toEqual(defaults);
    const copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (d) => { delete d.routing; });
    const bare = await compileGateway(await loadGateway(copy.configFile), CONTEXT);
    expect(bare.settings.routing).toEqual(defaults);
    // Every offering without its own routing: runs on the global policy.
    expect(bare.offerings.get('gpt-4o')!.routing).toEqual(defaults);
  });

  it('merges an offering\'s routing over the global one key by key, backoff_ms and circuit sub-key by sub-key', async () => {
    const copy = await copyWith(fixture({ chat: ['routing: { strategy: least_inflight, backoff_ms: { initial: 100 }, circuit: { open_seconds: 5 }, first_token_timeout_ms: null }'] }));
    await copy.editYaml('gateway.config.yaml', (d) => {
      d.routing = { max_attempts: 5, backoff_ms: { max: 8000 }, circuit: { failures: 2 }, first_token_timeout_ms: 10_000, strategy: 'latency' };
    });
    const gateway = await compileGateway(await loadGateway(copy.configFile), CONTEXT);
    const global = {
      maxAttempts: 5, retrySameDeployment: 1, backoffMs: { initial: 250, max: 8000 }, retryAfterMaxMs: 5000, deadlineMs: 90_000,
      firstTokenTimeoutMs: 10_000, streamIdleTimeoutMs: 30_000, strategy: 'latency', circuit: { failures: 2, windowSeconds: 30, openSeconds: 30 },
    };
    expect(gateway.settings.routing).toEqual(global);
    expect(gateway.offerings.get('fx-other')!.routing).toEqual(global);
    expect(gateway.offerings.get('fx-chat')!.routing).toEqual({
      ...global, strategy: 'least_inflight', backoffMs: { initial: 100, max: 8000 }, circuit: { failures: 2, windowSeconds: 30, openSeconds: 5 }, firstTokenTimeoutMs: null,
    });
  });

  it('gives an offering without deployments one: its own provider and upstream model, with the offering itself', async () => {
    const gateway = await compiled();
    for (const [id, expected] of [['gpt-4o-mini', 'openai/gpt-4o-mini'], ['gpt-4.1-codex-preview', 'openai/gpt-4.1'], ['fx-chat', 'fixture/fx-chat']] as const) {
      const offering = gateway.offerings.get(id)!;
      expect(offering.deployments).toHaveLength(1);
      const [d] = offering.deployments;
      expect(d!.id).toBe(expected);
      expect(d!.provider).toBe(gateway.providers.get(offering.providerId));
      expect(d!.offering).toBe(offering);
      expect([d!.weight, d!.priority]).toEqual([1, 0]);
    }
  });

  it('compiles listed deployments: defaults, ids, weights, priorities, and each one\'s view of the offering', async () => {
    const gateway = await compiled(fixture({
      chat: [
        'upstream_model: fx-chat-2025', 'deployments:', '  - { provider: fixture }', '  - { provider: openai, upstream_model: gpt-4o-mini, weight: 3, priority: 1 }',
        '  - { id: backup, provider: openai, weight: 0.5, priority: -1 }',
      ],
    }));
    const offering = gateway.offerings.get('fx-chat')!;
    expect(offering.providerId).toBe('fixture');
    expect(offering.upstreamModel).toBe('fx-chat-2025');
    expect(offering.deployments.map((d) => ({ id: d.id, provider: d.provider.id, model: d.offering.upstreamModel, via: d.offering.providerId, weight: d.weight, priority: d.priority }))).toEqual([
      { id: 'fixture/fx-chat-2025', provider: 'fixture', model: 'fx-chat-2025', via: 'fixture', weight: 1, priority: 0 },
      { id: 'openai/gpt-4o-mini', provider: 'openai', model: 'gpt-4o-mini', via: 'openai', weight: 3, priority: 1 },
      { id: 'backup', provider: 'openai', model: 'fx-chat-2025', via: 'openai', weight: 0.5, priority: -1 },
    ]);
    for (const d of offering.deployments) {
      expect(d.provider).toBe(gateway.providers.get(d.provider.id));
      // The same offering whichever serves: id, prices, billing, routing, and the one list of deployments.
      expect(d.offering).toMatchObject({ id: 'fx-chat', serviceType: 'CHAT' });
      expect(d.offering.billing).toBe(offering.billing);
      expect(d.offering.routing).toBe(offering.routing);
      expect(d.offering.deployments).toBe(offering.deployments);
    }
  });

  it('serves an offering only from its listed deployments, and still lists it under its own provider', async () => {
    const gateway = await compiled(fixture({ chat: ['deployments: [{ provider: openai }]'] }));
    const offering = gateway.offerings.get('fx-chat')!;
    expect(offering.deployments.map((d) => d.id)).toEqual(['openai/fx-chat']);
    expect(offering.providerId).toBe('fixture');
    expect((catalogBody(gateway).data as Array<{ id: string; provider: string }>).find((e) => e.id === 'fx-chat')?.provider).toBe('fixture');
  });

  it('compiles fallbacks and continuation as declared, empty and null by default', async () => {
    const gateway = await compiled(fixture({ chat: ['fallbacks: [fx-other, gpt-4o]', 'context_window_fallbacks: [gpt-4o-mini]', 'content_policy_fallbacks: [claude-sonnet-4-5]', 'continuation: prefill'] }));
    expect(gateway.offerings.get('fx-chat')).toMatchObject({
      fallbacks: ['fx-other', 'gpt-4o'], contextWindowFallbacks: ['gpt-4o-mini'], contentPolicyFallbacks: ['claude-sonnet-4-5'], continuation: 'prefill',
    });
    expect(gateway.offerings.get('fx-other')).toMatchObject({ fallbacks: [], contextWindowFallbacks: [], contentPolicyFallbacks: [], continuation: null });
  });

  it('pools the keys that are set, in order, with their locations; authHeaders sends the given key or the first', async () => {
    const gateway = await compiled(fixture(), { FIXTURE_KEY_A: 'key-a', FIXTURE_KEY_C: 'key-c' });
    const provider = gateway.providers.get('fixture')!;
    expect(provider.simulated).toBe(false);
    expect(provider.baseUrl).toBe('https://fixture.example/v1');
    expect(provider.keys.size).toBe(2);
    const first = provider.keys.next()!;
    const second = provider.keys.next()!;
    expect([first, second]).toEqual([{ index: 0, location: 'env:FIXTURE_KEY_A', value: 'key-a' }, { index: 1, location: 'env:FIXTURE_KEY_C', value: 'key-c' }]);
    expect(authHeaders(provider)).toEqual({ authorization: 'Bearer key-a' });
    expect(authHeaders(provider, second)).toEqual({ authorization: 'Bearer key-c' });
    provider.keys.remove(first);
    expect(authHeaders(provider)).toEqual({ authorization: 'Bearer key-c' });
    // A single `key` is a pool of one; no key set, a pool of none and no header (the simulator).
    const openai = (await compiled(fixture(), { OPENAI_API_KEY: 'sk-one' })).providers.get('openai')!;
    expect(openai.keys.any()).toEqual({ index: 0, location: 'env:OPENAI_API_KEY', value: 'sk-one' });
    const keyless = gateway.providers.get('openai')!;
    expect([keyless.simulated, keyless.keys.size, authHeaders(keyless)]).toEqual([true, 0, {}]);
  });

  it('simulates a provider when none of its keys is set (unless simulator_when_keyless is false)', async () => {
    const raw = await loadGateway((await copyWith(fixture())).configFile);
    const manifest = raw.providers.find((p) => p.manifest.id === 'fixture')!.manifest;
    expect(needsSimulator(manifest, {})).toBe(true);
    expect(needsSimulator(manifest, { FIXTURE_KEY_B: 'b' })).toBe(false);
    expect(needsSimulator(manifest, { FIXTURE_KEY_B: '' })).toBe(true);
    const strict: ProviderManifest = { ...manifest, simulator_when_keyless: false };
    expect(needsSimulator(strict, {})).toBe(false);
    expect((await compileGateway(raw, CONTEXT)).providers.get('fixture')).toMatchObject({ simulated: true, baseUrl: 'http://127.0.0.1:1/v1' });
  });

  it('finds the line of any JSON Pointer in a loaded manifest, or of its nearest parent', async () => {
    const raw = await loadGateway((await copyWith(fixture({ chat: ['deployments:', '  - { provider: fixture }'] }))).configFile);
    const { lineOf } = raw.providers.find((p) => p.file === FIXTURE)!;
    expect(lineOf('')).toBe(1);
    expect(lineOf('/auth/keys/2')).toBe(4);
    expect(lineOf('/offerings/0/deployments/0/provider')).toBe(15);
    expect(lineOf('/offerings/1')).toBe(16);
    expect(lineOf('/offerings/1/fallbacks/0')).toBe(16);
    expect(raw.configLineOf('/routing/circuit')).toBe((await readFile(join(raw.root, 'gateway.config.yaml'), 'utf8')).split('\n').findIndex((l) => l.startsWith('  circuit:')) + 1);
  });
});
