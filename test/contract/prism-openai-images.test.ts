/**
 * Contract (spec 4.14): the gateway's outgoing image-generation requests against OpenAI's published
 * spec (createImage, CreateImageRequest). A Prism mock plays OpenAI; the gateway runs with a
 * real-looking OpenAI key pointed at it, so the JSON the translator builds
 * (native-json--openai-images) is what Prism validates: each request must pass with no violation and
 * reach the vendor's path. A negative control (a value outside the spec's enum, sent straight to the
 * mock) shows the validation is live. Billing is not checked here: the mock's answer is generated
 * from the schema, not a real generation.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismProcess } from '../helpers/prism.js';

const OPENAI_SPEC = resolve(projectRoot(), '../shared/specs/openai/openapi.prism.json');

describe.runIf(storeKind === 'pglite')('Prism OpenAI images contract: generation requests validate against the spec', () => {
  let openai: PrismProcess;
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    openai = await startPrismMock(OPENAI_SPEC);
    t = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-test-not-real', OPENAI_BASE_URL: openai.url } });
    key = (await t.account('5')).key;
  }, 180_000);
  afterAll(async () => {
    await t?.dispose();
    await stopChild(openai?.child);
  }, 60_000);

  /** Sends `body` through the gateway and returns the one request the mock logged for it. */
  async function viaGateway(body: Record<string, unknown>) {
    const mark = logMark(openai);
    const res = await fetch(`${t.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    const logged = await loggedRequestsSince(openai, mark, 1);
    const detail = `-> ${res.status} ${text.slice(0, 300)}\n${logged.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    expect(logged, detail).toHaveLength(1);
    return { status: res.status, logged: logged[0]!, detail };
  }

  const cases: Array<[string, Record<string, unknown>]> = [
    ['gpt-image-1 with every parameter it takes', { model: 'gpt-image-1', prompt: 'A red square.', n: 2, size: '1536x1024', quality: 'high', background: 'opaque', output_format: 'webp', output_compression: 80, user: 'user-42' }],
    ['gpt-image-1 with the defaults', { model: 'gpt-image-1', prompt: 'A red square.' }],
    ['dall-e-3 with every parameter it takes', { model: 'dall-e-3', prompt: 'A lighthouse.', n: 1, size: '1024x1024', quality: 'standard', style: 'natural', response_format: 'b64_json' }],
  ];
  for (const [name, body] of cases) {
    it(`${name}: the upstream request passes the vendor's schema`, async () => {
      const { status, logged, detail } = await viaGateway(body);
      expect(status, detail).toBe(200);
      expect(logged.method).toBe('POST');
      expect(logged.path).toBe('/images/generations');
      expect(logged.violations, detail).toEqual([]);
      expect(logged.passed, detail).toBe(true);
      expect(logged.terminated, detail).toBeNull();
      expect(logged.headers['content-type'], detail).toMatch(/^application\/json/);
    });
  }

  it('negative control: a quality outside the spec\'s enum, sent straight to the mock, gets a violation', async () => {
    const mark = logMark(openai);
    const res = await fetch(`${openai.url}/images/generations`, { method: 'POST', headers: { authorization: 'Bearer sk-test-not-real', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-image-1', prompt: 'x', quality: 'ultra' }) });
    await res.arrayBuffer();
    const [logged] = await loggedRequestsSince(openai, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.violations.join('\n')).toMatch(/quality/);
  });
});
