/**
 * Contract (spec 4.8): the gateway's outgoing speech-to-text and text-to-speech requests against OpenAI's published spec.
 * A Prism mock (`prism mock`, not proxy: proxy mode corrupts binary bodies) plays OpenAI; the gateway
 * runs with a real-looking OpenAI key pointed at it, so the multipart FormData the translator builds
 * (native-json--openai-transcriptions) is what Prism validates against CreateTranscriptionRequest and
 * CreateTranslationRequest: the request must pass with no violation and reach the vendor's path. A
 * negative control (a field the spec does not have, sent straight to the mock) shows the validation is
 * live for multipart bodies. Billing is not checked here: the mock's example answer is a placeholder.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismProcess } from '../helpers/prism.js';

const OPENAI_SPEC = resolve(projectRoot(), '../shared/specs/openai/openapi.prism.json');
const WAV = readFileSync(join(projectRoot(), 'test/fixtures/files/sample.wav'));

describe.runIf(storeKind === 'pglite')('Prism OpenAI audio contract: multipart transcription requests validate against the spec', () => {
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

  const form = (fields: Record<string, string | string[]>): FormData => {
    const f = new FormData();
    for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) f.append(name, v);
    f.append('file', new Blob([new Uint8Array(WAV)], { type: 'audio/wav' }), 'sample.wav');
    return f;
  };

  /** Sends `body` through the gateway and returns the one request the mock logged for it. */
  async function viaGateway(path: string, body: FormData) {
    const mark = logMark(openai);
    const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
    const text = await res.text();
    const logged = await loggedRequestsSince(openai, mark, 1);
    const detail = `${path} -> ${res.status} ${text.slice(0, 300)}\n${logged.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    expect(logged, detail).toHaveLength(1);
    return { status: res.status, logged: logged[0]!, detail };
  }

  const cases: Array<[string, string, Record<string, string | string[]>, string]> = [
    ['whisper-1 with every standard parameter', '/v1/audio/transcriptions', { model: 'whisper-1', language: 'en', prompt: 'A test.', response_format: 'verbose_json', temperature: '0.2', 'timestamp_granularities[]': ['word', 'segment'] }, '/audio/transcriptions'],
    ['a token model', '/v1/audio/transcriptions', { model: 'gpt-4o-transcribe', response_format: 'json' }, '/audio/transcriptions'],
    ['a translation', '/v1/audio/translations', { model: 'whisper-1', prompt: 'A test.', temperature: '0' }, '/audio/translations'],
  ];
  for (const [name, path, fields, vendorPath] of cases) {
    it(`${name}: the upstream multipart request passes the vendor's schema`, async () => {
      const { status, logged, detail } = await viaGateway(path, form(fields));
      expect(status, detail).toBe(200);
      expect(logged.method).toBe('POST');
      expect(logged.path).toBe(vendorPath);
      expect(logged.violations, detail).toEqual([]);
      expect(logged.passed, detail).toBe(true);
      expect(logged.terminated, detail).toBeNull();
      expect(logged.headers['content-type'], detail).toMatch(/^multipart\/form-data; boundary=/);
    });
  }

  // Item 6 of issue 31: createSpeech's JSON body (CreateSpeechRequest, additionalProperties false): the
  // character-billed models as sent, gpt-4o-mini-tts with stream_format sse. The mock's placeholder
  // answer is no audio (nor a stream), so only the request is checked here: the gateway answers 502.
  const speechCases: Array<[string, Record<string, unknown>]> = [
    ['tts-1 with every parameter it takes', { model: 'tts-1', voice: 'alloy', input: 'Hello.', response_format: 'opus', speed: 1.5 }],
    ['gpt-4o-mini-tts with instructions (asked for SSE)', { model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Hello.', instructions: 'Warmly.' }],
  ];
  for (const [name, body] of speechCases) {
    it(`speech, ${name}: the upstream JSON request passes the vendor's schema`, async () => {
      const mark = logMark(openai);
      const res = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      const [logged] = await loggedRequestsSince(openai, mark, 1);
      const detail = `${res.status} ${text.slice(0, 300)}\n${logged?.lines.join('\n').slice(0, 6000)}`;
      expect(logged!.path, detail).toBe('/audio/speech');
      expect(logged!.violations, detail).toEqual([]);
      expect(logged!.passed, detail).toBe(true);
    });
  }

  it('negative control: a multipart request missing the required model gets a violation from the mock', async () => {
    const mark = logMark(openai);
    const f = new FormData();
    f.append('file', new Blob([new Uint8Array(WAV)], { type: 'audio/wav' }), 'sample.wav');
    const res = await fetch(`${openai.url}/audio/transcriptions`, { method: 'POST', headers: { authorization: 'Bearer sk-test-not-real' }, body: f });
    await res.arrayBuffer();
    const [logged] = await loggedRequestsSince(openai, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.violations.join('\n')).toMatch(/model/);
  });
});
