/**
 * POST /v1/audio/speech end to end (issue 11 item 2; spec 4.8, 1, 7): the official `openai` SDK's
 * `audio.speech.create` through the gateway to the simulator playing ElevenLabs'
 * `POST /v1/text-to-speech/{voice_id}`. The voice name becomes the vendor's voice id (the route's
 * `map` policy), the MP3 comes back as audio/mpeg, billed per character of `input` with the settled
 * charge and quantity in X-Gateway-Cost-USD and X-Gateway-Characters. Every refusal (unknown voice, a
 * format other than mp3, voice instructions, a voice setting the model family does not take) is a
 * 400 with nothing reserved; an upstream fault charges nothing.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { frameCount } from '../../src/sim/elevenlabs.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectBrokenAnswer, expectUntouched, postJson } from '../helpers/native.js';

/** True when `data` is a run of MPEG audio frames from its first byte (frame sync 0xFFE, Layer III). */
function isMp3(data: Buffer): boolean {
  return data.length > 4 && data[0] === 0xff && (data[1]! & 0xe0) === 0xe0 && ((data[1]! >> 1) & 3) === 1;
}

describeStore(`speech (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });

  it('writes a playable MP3 with the openai SDK and bills every character of the input exactly', async () => {
    const account = await t.account('1');
    const input = 'Hello from the gateway, in George\'s voice. Ünïcödé counts per code point: 😀.';
    const raw = await client(account.key).audio.speech.create({ model: 'eleven_multilingual_v2', voice: 'george', input, response_format: 'mp3', speed: 1.1 }).asResponse();
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('audio/mpeg');
    const file = join(await mkdtemp(join(tmpdir(), 'speech-')), 'speech.mp3');
    await writeFile(file, Buffer.from(await raw.arrayBuffer()));
    const data = await readFile(file);
    expect(isMp3(data)).toBe(true);
    // 76 code points (77 UTF-16 units: the emoji is one character), at $0.10 per 1,000: $0.0076.
    const characters = 76;
    expect([...input].length).toBe(characters);
    expect(data.length).toBe(frameCount(characters / 15) * 417);
    expect(raw.headers.get('x-gateway-characters')).toBe('76');
    const amount = 7_600_000n;
    expect(raw.headers.get('x-gateway-cost-usd')).toBe('0.0076');
    const rows = (await t.usage(account.id)).data;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'speech', unit: 'character', quantity: BigInt(characters), amountNano: amount, model: 'eleven_multilingual_v2' });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - amount, heldNano: 0n, openHolds: 0 });
    // What ElevenLabs received: the voice id in the path, settings in voice_settings, MP3 asked for.
    const last = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { path: string; body: unknown };
    expect(last.path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb');
    expect(last.body).toEqual({ text: input, model_id: 'eleven_multilingual_v2', voice_settings: { speed: 1.1 } });
  });

  it('takes every voice setting on multilingual v2 and flash, only stability on v3, stability and similarity on v4 (spec 4.8)', async () => {
    const account = await t.account('1');
    const all = { stability: 0.5, similarity_boost: 0.7, style: 0.2, speed: 0.9, use_speaker_boost: true };
    for (const model of ['eleven_multilingual_v2', 'eleven_flash_v2_5', 'eleven_flash_v2']) {
      const a = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, voice: 'rachel', input: 'Hi.', ...all }) });
      expect(a.status, model).toBe(200);
      expect(isMp3(Buffer.from(await a.arrayBuffer()))).toBe(true);
    }
    const v3 = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'eleven_v3', voice: 'adam', input: 'Hi.', stability: 0.5 }) });
    expect(v3.status).toBe(200);
    await v3.arrayBuffer();
    const last = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { body: unknown };
    expect(last.body).toEqual({ text: 'Hi.', model_id: 'eleven_v3', voice_settings: { stability: 0.5 } });
    const none = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'eleven_v3_conversational', voice: 'bella', input: 'Hi.' }) });
    expect(none.status).toBe(200);
    await none.arrayBuffer();
    expect(((await (await fetch(`${t.sim.url}/__sim/last`)).json()) as { body: unknown }).body).toEqual({ text: 'Hi.', model_id: 'eleven_v3_conversational' });
  });

  it('refuses with a 400 before anything is reserved: voice, format, instructions, settings per family, bad values', async () => {
    const account = await t.account('1');
    const speech = (body: Record<string, unknown>) => postJson(t, '/v1/audio/speech', account.key, { model: 'eleven_multilingual_v2', voice: 'george', input: 'Hi.', ...body });
    // `ash` is an OpenAI voice with no ElevenLabs counterpart (alloy has one: speech-openai.test.ts).
    const unknownVoice = await speech({ voice: 'ash' });
    expect(unknownVoice.status).toBe(400);
    expect(unknownVoice.json.error).toMatchObject({ code: 'invalid_request', param: 'voice' });
    expect(unknownVoice.json.error.message).toContain('Accepted values: adam, alloy, alice, aria');
    expect(unknownVoice.json.error.message).toContain('george');
    const wav = await speech({ response_format: 'wav' });
    expect(wav.json.error).toMatchObject({ code: 'invalid_request', param: 'response_format', message: `Unsupported value for 'response_format': "wav". Accepted values: mp3.` });
    const instructions = await speech({ instructions: 'Speak like a pirate.' });
    expect(instructions.status).toBe(400);
    expect(instructions.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'instructions', message: 'Voice instructions are not supported.' });
    const matrix: Array<[string, string]> = [
      ['eleven_v3', 'similarity_boost'], ['eleven_v3', 'style'], ['eleven_v3', 'speed'], ['eleven_v3', 'use_speaker_boost'],
      ['eleven_v3_conversational', 'similarity_boost'], ['eleven_v3_conversational', 'speed'],
    ];
    for (const [model, setting] of matrix) {
      const a = await speech({ model, [setting]: setting === 'use_speaker_boost' ? true : 1 });
      expect(a.status, `${model} ${setting}`).toBe(400);
      expect(a.json.error).toMatchObject({ code: 'unsupported_parameter', param: setting });
    }
    const soon = await speech({ model: 'eleven_v4' });
    expect(soon.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ speed: 1.5 }, 'speed'], [{ speed: 0.5 }, 'speed'], [{ stability: 2 }, 'stability'], [{ input: '' }, 'input'],
      [{ input: undefined }, 'input'], [{ voice: undefined }, 'voice'], [{ stream_format: 'sse' }, 'stream_format'],
    ];
    for (const [body, param] of bad) {
      const a = await speech(body);
      expect(a.status, JSON.stringify(body)).toBe(400);
      expect(a.json.error.param, JSON.stringify(a.json)).toBe(param);
    }
    const sfxModel = await speech({ model: 'eleven_text_to_sound_v2' });
    expect(sfxModel.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    await expectUntouched(t, account, 1_000_000_000n);
  });

  it('charges nothing when ElevenLabs fails or the answer is cut, and answers 402 when the text does not fit', async () => {
    const account = await t.account('1');
    const body = { model: 'eleven_flash_v2_5', voice: 'liam', input: 'Nothing to pay.' };
    await t.fault({ status: 500 }, 'eleven_flash_v2_5');
    const failed = await postJson(t, '/v1/audio/speech', account.key, body);
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe('upstream_error');
    await t.clearFaults();
    await t.fault({ status: 422 }, 'eleven_flash_v2_5');
    const refused = await postJson(t, '/v1/audio/speech', account.key, body);
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toBe('simulated error (status 422)');
    await t.clearFaults();
    await t.fault({ truncate_after_chunks: 2 }, 'eleven_flash_v2_5');
    const cut = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // Streamed through (the price is known from the request): a 200 whose body breaks off.
    await expectBrokenAnswer(cut);
    await expectUntouched(t, account, 1_000_000_000n);
    await t.clearFaults();
    const poor = await t.account('0.000001');
    const short = await postJson(t, '/v1/audio/speech', poor.key, { ...body, model: 'eleven_multilingual_v2' });
    expect(short.status).toBe(402);
    expect(short.json.error.code).toBe('insufficient_balance');
    await expectUntouched(t, poor, 1_000n);
  });
});
