/**
 * The simulator's OpenAI speech to text (src/sim/openai-audio.ts; spec 4.8): multipart in, the audio's
 * measured duration in a deterministic text, `usage` of type tokens for the token models and duration
 * for whisper-1, the plain-text formats as text/plain, OpenAI-shaped errors, faults keyed by `model`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { countTextTokens } from '../../src/tokenize.js';
import { wavOfTenths } from '../helpers/wav.js';

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await (await fetch(`${sim.url}/__sim/reset`, { method: 'POST' })).arrayBuffer(); });

const MP3 = readFileSync(join(import.meta.dirname, '../fixtures/files/sample.mp3'));
async function call(path: string, fields: Record<string, string | string[]>, file: Buffer | null = wavOfTenths(12)): Promise<{ status: number; type: string; text: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  if (file) form.append('file', new Blob([new Uint8Array(file)], { type: 'audio/wav' }), 'a.wav');
  const res = await fetch(`${sim.url}${path}`, { method: 'POST', body: form });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('OpenAI POST /v1/audio/transcriptions and /translations (simulator)', () => {
  it('token models stream with stream=true (delta events, then done with the usage); whisper-1 ignores it', async () => {
    const a = await call('/v1/audio/transcriptions', { model: 'gpt-4o-transcribe', stream: 'true' });
    expect(a.type).toMatch(/^text\/event-stream/);
    const events = a.text.split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, '')) as { type: string; delta?: string; text?: string; usage?: { input_tokens: number } });
    const text = 'Simulated transcription of 1.2 seconds of audio.';
    expect(events.slice(0, -1).every((e) => e.type === 'transcript.text.delta')).toBe(true);
    expect(events.slice(0, -1).map((e) => e.delta).join('')).toBe(text);
    expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', text, usage: { type: 'tokens', input_tokens: 20, output_tokens: countTextTokens(text) } });
    const whisper = await call('/v1/audio/transcriptions', { model: 'whisper-1', stream: 'true' });
    expect(JSON.parse(whisper.text)).toMatchObject({ text });
  });

  it('whisper-1: JSON with duration usage; verbose_json with segments and words', async () => {
    const a = await call('/v1/audio/transcriptions', { model: 'whisper-1' });
    expect(a.status, a.text).toBe(200);
    expect(JSON.parse(a.text)).toEqual({ text: 'Simulated transcription of 1.2 seconds of audio.', usage: { type: 'duration', seconds: 2 } });
    const v = JSON.parse((await call('/v1/audio/transcriptions', { model: 'whisper-1', response_format: 'verbose_json', 'timestamp_granularities[]': ['word'], language: 'de' })).text);
    expect(v).toMatchObject({ task: 'transcribe', language: 'de', duration: 1.2, segments: [{ id: 0, start: 0, end: 1.2 }] });
    expect(v.words).toHaveLength(7);
  });

  it('token models: usage of type tokens (10 audio tokens per started second, the prompt and the text counted)', async () => {
    const a = await call('/v1/audio/transcriptions', { model: 'gpt-4o-mini-transcribe', prompt: 'Hello there.' }, MP3);
    const body = JSON.parse(a.text);
    const prompt = countTextTokens('Hello there.');
    const output = countTextTokens(body.text);
    expect(body.usage).toEqual({ type: 'tokens', input_tokens: 10 + prompt, input_token_details: { text_tokens: prompt, audio_tokens: 10 }, output_tokens: output, total_tokens: 10 + prompt + output });
    expect((await call('/v1/audio/transcriptions', { model: 'gpt-4o-transcribe', response_format: 'verbose_json' })).status).toBe(400);
  });

  it('answers text, srt and vtt as text/plain', async () => {
    expect(await call('/v1/audio/translations', { model: 'whisper-1', response_format: 'text' })).toMatchObject({ status: 200, type: 'text/plain; charset=utf-8', text: 'Simulated English translation of 1.2 seconds of audio.\n' });
    expect((await call('/v1/audio/transcriptions', { model: 'whisper-1', response_format: 'srt' })).text).toContain('00:00:00,000 --> 00:00:01,200');
    expect((await call('/v1/audio/transcriptions', { model: 'whisper-1', response_format: 'vtt' })).text).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:01\.200/);
  });

  it('refuses as OpenAI does: no file, unreadable audio, unknown field or model, a token model on translations', async () => {
    const cases: Array<[string, Record<string, string>, Buffer | null, number, string | null]> = [
      ['/v1/audio/transcriptions', { model: 'whisper-1' }, null, 400, 'file'],
      ['/v1/audio/transcriptions', { model: 'whisper-1' }, Buffer.from('text, not audio'), 400, 'file'],
      ['/v1/audio/transcriptions', { model: 'whisper-1', colour: 'red' }, wavOfTenths(5), 400, 'colour'],
      ['/v1/audio/transcriptions', { model: 'whisper-9' }, wavOfTenths(5), 404, 'model'],
      ['/v1/audio/translations', { model: 'gpt-4o-transcribe' }, wavOfTenths(5), 404, 'model'],
      ['/v1/audio/translations', { model: 'whisper-1', language: 'en' }, wavOfTenths(5), 400, 'language'],
    ];
    for (const [path, fields, file, status, param] of cases) {
      const a = await call(path, fields, file);
      expect(a.status, `${path} ${a.text}`).toBe(status);
      expect(JSON.parse(a.text).error.param).toBe(param);
    }
  });

  it("takes faults by the form's model", async () => {
    await (await fetch(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-transcribe', fault: { status: 503 } }) })).arrayBuffer();
    expect((await call('/v1/audio/transcriptions', { model: 'whisper-1' })).status).toBe(200);
    expect((await call('/v1/audio/transcriptions', { model: 'gpt-4o-transcribe' })).status).toBe(503);
  });
});
