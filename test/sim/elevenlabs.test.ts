/**
 * The simulator playing ElevenLabs (src/sim/elevenlabs.ts, docs/vendors/elevenlabs.md): valid MP3
 * frames whose length follows the text or the requested duration, the key header, and the vendor's
 * error shapes for bad input (422 `{detail: [{loc, msg, type}]}`, `{detail: {status, message}}`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARS_PER_SECOND, frameCount, framesDuration, silentMp3 } from '../../src/sim/elevenlabs.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { storeKind } from '../helpers/db.js';

describe.runIf(storeKind === 'pglite')('simulated ElevenLabs', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const data = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, data, json: () => JSON.parse(data.toString()) as any };
  };

  it('holds the last piece of an answer until released (fault hold_last_chunk), the rest sent before', async () => {
    await fetch(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: { hold_last_chunk: true, times: 1 } }) });
    const res = await fetch(`${sim.url}/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'x'.repeat(150) }) });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    const released = await (await fetch(`${sim.url}/__sim/release`, { method: 'POST' })).json();
    expect(released).toEqual({ released: 1 });
    let size = first.value!.length;
    for (let r = await reader.read(); !r.done; r = await reader.read()) size += r.value.length;
    expect(size).toBe(silentMp3(10).length);
  });

  it('builds frames of 1152 samples at 44.1 kHz, 417 bytes each, every one starting with a frame sync', () => {
    const mp3 = silentMp3(2);
    expect(frameCount(2)).toBe(77);
    expect(mp3.length).toBe(77 * 417);
    for (let i = 0; i < 77; i++) expect([...mp3.subarray(i * 417, i * 417 + 4)]).toEqual([0xff, 0xfb, 0x90, 0xc4]);
    expect(framesDuration(frameCount(30))).toBeCloseTo(30, 1);
    expect(frameCount(0.5)).toBe(19);
  });

  it('speaks: MP3 as long as the text at the simulated rate, with the key header accepted', async () => {
    const text = 'x'.repeat(45);
    const a = await post('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128', { text, model_id: 'eleven_flash_v2_5', voice_settings: { stability: 0.5, speed: 1.2 } }, { 'xi-api-key': 'k' });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('audio/mpeg');
    expect(a.headers.get('character-cost')).toBe('45');
    expect(a.data.length).toBe(frameCount(45 / CHARS_PER_SECOND) * 417);
  });

  it('generates sound effects as long as asked, guessing 5 s without a duration', async () => {
    const a = await post('/v1/sound-generation', { text: 'rain', duration_seconds: 0.5, loop: true, prompt_influence: 0.3, model_id: 'eleven_text_to_sound_v2' });
    expect(a.status).toBe(200);
    expect(a.data.length).toBe(frameCount(0.5) * 417);
    expect((await post('/v1/sound-generation', { text: 'rain' })).data.length).toBe(frameCount(5) * 417);
  });

  it('answers bad input in the vendor\'s shapes', async () => {
    const missing = await post('/v1/sound-generation', { duration_seconds: 1 });
    expect(missing.status).toBe(422);
    expect(missing.json()).toEqual({ detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] });
    const long = await post('/v1/sound-generation', { text: 'x', duration_seconds: 30.5 });
    expect(long.json().detail[0]).toMatchObject({ loc: ['body', 'duration_seconds'] });
    const extra = await post('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb', { text: 'x', voice: 'george' });
    expect(extra.json().detail[0]).toMatchObject({ loc: ['body', 'voice'], type: 'extra_forbidden' });
    const speed = await post('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb', { text: 'x', voice_settings: { speed: 2 } });
    expect(speed.json().detail[0]).toMatchObject({ loc: ['body', 'voice_settings', 'speed'] });
    const voice = await post('/v1/text-to-speech/george', { text: 'x' });
    expect(voice.status).toBe(404);
    expect(voice.json().detail.status).toBe('voice_not_found');
    const model = await post('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb', { text: 'x', model_id: 'eleven_nope' });
    expect([model.status, model.json().detail.status]).toEqual([400, 'model_not_found']);
    const format = await post('/v1/sound-generation?output_format=pcm_16000', { text: 'x' });
    expect(format.status).toBe(422);
    const key = await post('/v1/sound-generation', { text: 'x' }, { 'xi-api-key': ' ' });
    expect(key.status).toBe(401);
    expect((await post('/v1/sound-generation', 'not json')).status).toBe(422);
  });
});
