/**
 * Hardening where the gateway meets an upstream (split from hardening.test.ts):
 *  (e) upstream timeouts come from the provider manifest (504 in the client format, nothing charged);
 *  (f) a small body cannot pin the event loop: the pre-flight token estimate stays fast on pathological text.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { fuzzRoutes, rawHttp, type FuzzRoute } from '../helpers/fuzz.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectError, SAMPLE, settledState, versionHeaders } from '../helpers/route-samples.js';

const ROUTES = fuzzRoutes();
const route = (id: string): FuzzRoute => ROUTES.find((r) => r.id === id)!;

/** The `type` each format gives a 504 (spec 7 error families in the client vocabulary). */
const TIMEOUT_TYPE = { openai: 'server_error', messages: 'timeout_error', cohere: undefined } as const;

describeStore('hardening: pathological text in the token estimate', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  // A zero balance makes the rate-limit stage estimate the prompt and refuse with 402 before any
  // upstream call. 32 000 characters of one letter is a 64 KB body; the o200k BPE is quadratic in
  // the length of one pre-token, so the gateway counts bounded chunks (src/tokenize.ts). How long
  // it takes is a benchmark figure, not an assertion: this checks the answer is still right.
  it.each([
    ['chat-completions', 'é', (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] })],
    ['responses', 'ü', (text: string) => ({ model: 'gpt-4o-mini', input: text })],
    ['messages', 'ñ', (text: string) => ({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: text }] })],
  ] as const)('%s: a 64 KB run of one accented letter (%s) is estimated and refused cleanly', async (id, letter, build) => {
    const broke = await t.account('0');
    const r = route(id);
    const upstreamCalls = t.sim.requests;
    const res = await rawHttp(t.url, {
      method: 'POST', path: r.path, body: JSON.stringify(build(letter.repeat(32_000))),
      headers: { authorization: `Bearer ${broke.key}`, 'content-type': 'application/json', ...versionHeaders(t, r) },
    });
    expectError(r, res, 402, 'insufficient_balance', id);
    expect(t.sim.requests).toBe(upstreamCalls);
  }, 60_000);
});

describeStore('hardening: upstream timeouts from the provider manifest', () => {
  let t: TestGateway;
  let config: ConfigCopy;
  let account: { id: string; key: string };

  beforeAll(async () => {
    config = await copyConfig();
    await config.editYaml('providers/anthropic.yaml', (doc) => { doc.timeouts.headers_ms = 300; });
    t = await startTestGateway({ configFile: config.configFile });
    account = await t.account('1');
  });
  afterAll(async () => {
    await t?.dispose();
    if (config) await rm(config.dir, { recursive: true, force: true });
  });

  const send = (r: FuzzRoute, body: Record<string, unknown>) => rawHttp(t.url, {
    method: 'POST', path: r.path, body: JSON.stringify(body),
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...versionHeaders(t, r) },
  });

  it('answers 504 in the client shape from headers_ms: 300 against a 1000 ms simulator latency, charging nothing', async () => {
    expect(t.gw.generation().gateway.providers.get('anthropic')!.timeouts.headersMs).toBe(300);
    const upstream = t.gw.generation().gateway.offerings.get('claude-haiku-4-5')!.upstreamModel;
    await t.fault({ latency_ms: 1000 }, upstream);
    const before = await settledState(t, account.id);
    for (const [id, body] of [
      ['messages', SAMPLE.messages!], ['messages', { ...SAMPLE.messages, stream: true }], ['count-tokens', SAMPLE['count-tokens']!],
      ['chat-completions', { ...SAMPLE['chat-completions'], model: 'claude-haiku-4-5' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const r = route(id);
      const res = await send(r, body);
      const error = expectError(r, res, 504, 'upstream_timeout', `${id} ${JSON.stringify(body)}`);
      expect(error.type).toBe(TIMEOUT_TYPE[r.shape]);
      // The default headers_ms (120 s) would have waited for the simulator's answer at 1000 ms and
      // returned 200: the 504 itself shows the manifest's 300 ms applied.
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    }
    expect(await settledState(t, account.id)).toEqual(before);
    expect((await t.settled(account.id))!.heldNano).toBe(0n);
  }, 30_000);

  it('keeps the other providers on their own timeouts, and recovers once the upstream is fast again', async () => {
    const upstream = t.gw.generation().gateway.offerings.get('claude-haiku-4-5')!.upstreamModel;
    await t.clearFaults();
    await t.fault({ latency_ms: 1000, times: 1 }, 'gpt-4o-mini');
    const chat = await send(route('chat-completions'), SAMPLE['chat-completions']!);
    expect(chat.status, chat.body.slice(0, 300)).toBe(200);
    await t.fault({ latency_ms: 100, times: 1 }, upstream);
    const messages = await send(route('messages'), SAMPLE.messages!);
    expect(messages.status, messages.body.slice(0, 300)).toBe(200);
    await t.clearFaults();
  }, 30_000);
});
