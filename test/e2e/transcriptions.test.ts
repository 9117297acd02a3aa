/**
 * Speech to text end to end (spec 4.8; spec 1 "audio minute or reported tokens"): the official openai
 * SDK's `audio.transcriptions.create` and `audio.translations.create` unchanged (multipart, a read
 * stream or `toFile`), JSON with a finalized temporary file of purpose AUDIO_INPUT (3-step upload),
 * exact billing at the minute edges (59.9 s, 60 s, 60.1 s: whole started seconds at the price of a
 * minute / 60) and for a token model (the vendor's reported usage), X-Gateway-Cost-USD on every
 * answer, and every refusal a 400 (404 for another account's file) with nothing reserved or charged.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson } from '../helpers/native.js';
import { wavOfTenths } from '../helpers/wav.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/files');
const FULL = 5_000_000_000n;
/** whisper-1: $0.006 per 60 seconds = 100,000 nano-USD per billed second. */
const NANO_PER_SECOND = 100_000n;

describeStore(`audio transcriptions and translations (${storeKind})`, () => {
  let t: TestGateway;
  let client: OpenAI;
  let account: { id: string; key: string };
  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const balance = async (id: string): Promise<bigint> => (await t.settled(id))!.balanceNano;
  const lastUpstream = async (): Promise<{ path: string; headers: Record<string, string> }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; headers: Record<string, string> }>;
  const form = (fields: Record<string, string>, file?: { data: Buffer; name: string; type: string }): FormData => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    if (file) f.append('file', new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
    return f;
  };
  const postForm = async (key: string, path: string, body: FormData): Promise<{ status: number; headers: Headers; json: any }> => {
    const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
    return { status: res.status, headers: res.headers, json: await res.json() };
  };
  /** Spec 4.7: authorize, PUT with exactly the returned method and headers, finalize. */
  async function temporaryFile(key: string, purpose: string, contentType: string, bytes: Buffer): Promise<string> {
    const a = await postJson(t, '/v1/gateway/files/upload-authorizations', key, { purpose, content_type: contentType, byte_size: bytes.length });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const put = await fetch(a.json.upload_url, { method: a.json.method, headers: a.json.headers, body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    const f = await postJson(t, `/v1/gateway/files/${a.json.file_id}/finalize`, key, undefined);
    expect(f.status, JSON.stringify(f.json)).toBe(200);
    return a.json.file_id as string;
  }

  it('the openai SDK transcribes a read stream with whisper-1, billed per started second with the cost header', async () => {
    const before = await balance(account.id);
    const { data, response } = await client.audio.transcriptions.create({ file: createReadStream(join(FIXTURES, 'sample.wav')), model: 'whisper-1' }).withResponse();
    expect(data.text).toBe('Simulated transcription of 0.1 seconds of audio.');
    // 0.1 s bills 1 second: $0.0001.
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.0001');
    expect(response.headers.get('x-gateway-audio-seconds')).toBe('1');
    expect(before - (await balance(account.id))).toBe(NANO_PER_SECOND);
    expect((await lastUpstream()).path).toBe('/v1/audio/transcriptions');
  });

  it('the SDK with toFile on a token model: the reported usage billed at input and output prices', async () => {
    const before = await balance(account.id);
    const file = await toFile(readFileSync(join(FIXTURES, 'sample.mp3')), 'sample.mp3', { type: 'audio/mpeg' });
    const { data, response } = await client.audio.transcriptions.create({ file, model: 'gpt-4o-transcribe', prompt: 'A test.' }).withResponse();
    const usage = (data as unknown as { usage: { type: string; input_tokens: number; output_tokens: number; input_token_details: { audio_tokens: number } } }).usage;
    expect(usage.type).toBe('tokens');
    expect(usage.input_token_details.audio_tokens).toBe(10);
    // $6 and $10 per 1M tokens: 6,000 and 10,000 nano-USD per token; one rounding (exact here).
    const charge = BigInt(usage.input_tokens) * 6000n + BigInt(usage.output_tokens) * 10_000n;
    expect(before - (await balance(account.id))).toBe(charge);
    expect(response.headers.get('x-gateway-cost-usd')).toBe((Number(charge) / 1e9).toString());
    const rows = (await t.usage(account.id, { limit: 1 })).data;
    expect(rows[0]).toMatchObject({ model: 'gpt-4o-transcribe', unit: 'token', amountNano: charge, quantity: BigInt(usage.input_tokens + usage.output_tokens) });
  });

  it('the SDK translates to English with whisper-1', async () => {
    const result = await client.audio.translations.create({ file: await toFile(readFileSync(join(FIXTURES, 'sample.wav')), 'a.wav'), model: 'whisper-1' });
    expect(result.text).toBe('Simulated English translation of 0.1 seconds of audio.');
    expect((await lastUpstream()).path).toBe('/v1/audio/translations');
  });

  it('bills the minute edges exactly: 59.9 s -> 60 s, 60 s -> 60 s, 60.1 s -> 61 s (one rounding per row)', async () => {
    const edge = await t.account('1');
    for (const [tenths, seconds, cost] of [[599, 60n, '0.006'], [600, 60n, '0.006'], [601, 61n, '0.0061']] as const) {
      const before = await balance(edge.id);
      const a = await postForm(edge.key, '/v1/audio/transcriptions', form({ model: 'whisper-1' }, { data: wavOfTenths(tenths), name: 'edge.wav', type: 'audio/wav' }));
      expect(a.status, JSON.stringify(a.json)).toBe(200);
      expect(a.json.text).toBe(`Simulated transcription of ${(tenths / 10).toFixed(1)} seconds of audio.`);
      expect(a.headers.get('x-gateway-cost-usd')).toBe(cost);
      expect(a.headers.get('x-gateway-audio-seconds')).toBe(seconds.toString());
      expect(before - (await balance(edge.id))).toBe(seconds * NANO_PER_SECOND);
      const [row] = (await t.usage(edge.id, { limit: 1 })).data;
      expect(row).toMatchObject({ kind: 'audio-transcriptions', unit: 'second', quantity: seconds, amountNano: seconds * NANO_PER_SECOND, model: 'whisper-1' });
    }
    expect(await t.settled(edge.id)).toMatchObject({ heldNano: 0n, openHolds: 0 });
  });

  it('JSON with a finalized AUDIO_INPUT file_id: the file goes upstream as the multipart part, verbose_json with word timestamps', async () => {
    const owner = await t.account('1');
    const id = await temporaryFile(owner.key, 'AUDIO_INPUT', 'audio/wav', wavOfTenths(25));
    const a = await postJson(t, '/v1/audio/transcriptions', owner.key, { model: 'whisper-1', file_id: id, response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'], language: 'en' });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json).toMatchObject({ task: 'transcribe', language: 'en', duration: 2.5, text: 'Simulated transcription of 2.5 seconds of audio.' });
    expect(a.json.words).toHaveLength(7);
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.0003');
    expect((await lastUpstream()).headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const translated = await postJson(t, '/v1/audio/translations', owner.key, { model: 'whisper-1', file_id: id });
    expect(translated.status, JSON.stringify(translated.json)).toBe(200);
    expect(await balance(owner.id)).toBe(1_000_000_000n - 6n * NANO_PER_SECOND);
  });

  it('refuses with a 400 naming the parameter, before anything is reserved', async () => {
    const refused = await t.account('5');
    const wav = { data: readFileSync(join(FIXTURES, 'sample.wav')), name: 'a.wav', type: 'audio/wav' };
    const image = await temporaryFile(refused.key, 'VISION_INPUT', 'image/png', readFileSync(join(FIXTURES, 'sample.png')));
    const cases: Array<[string, () => Promise<{ status: number; json: any }>, number, string | null, string?]> = [
      ['unreadable audio', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'whisper-1' }, { data: Buffer.from('not audio at all, just text'), name: 'a.wav', type: 'audio/wav' })), 400, 'file'],
      // Item 7 of issue 31: text, srt and vtt are answered, and the token models stream (transcriptions-formats.test.ts).
      ['srt on a token model', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'gpt-4o-transcribe', response_format: 'srt' }, wav)), 400, 'response_format', 'json, text'],
      ['an unknown format', () => postForm(refused.key, '/v1/audio/translations', form({ model: 'whisper-1', response_format: 'ogg' }, wav)), 400, 'response_format'],
      ['stream on whisper-1', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'whisper-1', stream: 'true' }, wav)), 400, 'stream'],
      ['no file part', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'whisper-1' })), 400, 'file'],
      ['JSON without file_id', () => postJson(t, '/v1/audio/transcriptions', refused.key, { model: 'whisper-1' }), 400, 'file', 'file_id'],
      ['unknown field', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'whisper-1', colour: 'red' }, wav)), 400, 'colour'],
      ['language on translations', () => postJson(t, '/v1/audio/translations', refused.key, { model: 'whisper-1', file_id: image, language: 'de' }), 400, 'language'],
      ['temperature out of range', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'whisper-1', temperature: '2' }, wav)), 400, 'temperature'],
      ['a chat model', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'gpt-4o-mini' }, wav)), 400, 'model'],
      ['wrong purpose', () => postJson(t, '/v1/audio/transcriptions', refused.key, { model: 'whisper-1', file_id: image }), 400, 'file_id'],
      ['file_id and file', () => postForm(refused.key, '/v1/audio/transcriptions', form({ model: 'whisper-1', file_id: image }, wav)), 400, 'file_id'],
    ];
    for (const [name, call, status, param, mention] of cases) {
      const a = await call();
      expect(a.status, `${name}: ${JSON.stringify(a.json)}`).toBe(status);
      expect(a.json.error.param ?? null, name).toBe(param);
      if (mention) expect(a.json.error.message, name).toContain(mention);
    }
    // Another account's real file: 404, as for an unknown one (spec 4.7 rule 4).
    const other = await t.account('1');
    const theirs = await temporaryFile(other.key, 'AUDIO_INPUT', 'audio/wav', wavOfTenths(10));
    const a = await postJson(t, '/v1/audio/transcriptions', refused.key, { model: 'whisper-1', file_id: theirs });
    expect(a.status).toBe(404);
    expect(a.json.error.code).toBe('file_not_found');
    await expectUntouched(t, refused, FULL);
  });

  it('reserves the measured duration (minutes) or the duration estimate (tokens) before forwarding: 402 when it does not fit', async () => {
    // 60.1 s needs $0.0061 held; $0.006 does not cover it (no credit), so nothing reaches the vendor.
    const short = await t.account('0.006');
    const before = (await (await fetch(`${t.sim.url}/__sim/stats`)).json() as { requests: number }).requests;
    const a = await postForm(short.key, '/v1/audio/transcriptions', form({ model: 'whisper-1' }, { data: wavOfTenths(601), name: 'a.wav', type: 'audio/wav' }));
    expect(a.status, JSON.stringify(a.json)).toBe(402);
    expect(a.json.error.message).toContain('$0.0061');
    // The token model holds 20 input tokens per second and its 2,000 output tokens: $0.02 and more.
    const b = await postForm(short.key, '/v1/audio/transcriptions', form({ model: 'gpt-4o-mini-transcribe' }, { data: wavOfTenths(5), name: 'a.wav', type: 'audio/wav' }));
    expect(b.status, JSON.stringify(b.json)).toBe(402);
    expect(b.json.error).toMatchObject({ param: null, message: expect.stringMatching(/plus the model's 2000 output tokens\); \$0\.006 is available\. Top up\.$/) });
    expect((await (await fetch(`${t.sim.url}/__sim/stats`)).json() as { requests: number }).requests).toBe(before);
    await expectUntouched(t, short, 6_000_000n);
    // 59.9 s fits exactly: the hold is the charge, $0.006.
    const c = await postForm(short.key, '/v1/audio/transcriptions', form({ model: 'whisper-1' }, { data: wavOfTenths(599), name: 'a.wav', type: 'audio/wav' }));
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    expect(await t.settled(short.id)).toMatchObject({ balanceNano: 0n, heldNano: 0n, openHolds: 0 });
  });

  it('an upstream failure charges nothing and releases the hold', async () => {
    const failing = await t.account('1');
    await fetch(`${t.sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'whisper-1', fault: { status: 500, times: 2 } }) }); // both attempts (issue 29)
    const a = await postForm(failing.key, '/v1/audio/transcriptions', form({ model: 'whisper-1' }, { data: wavOfTenths(5), name: 'a.wav', type: 'audio/wav' }));
    expect(a.status).toBeGreaterThanOrEqual(500);
    await expectUntouched(t, failing, 1_000_000_000n);
  });
});
