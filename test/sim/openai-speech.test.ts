/**
 * The simulator's OpenAI text to speech (src/sim/openai-speech.ts; createSpeech): each format's file
 * with its media type, SSE (`stream_format: sse`) on gpt-4o-mini-tts only, its audio deltas joined
 * being the plain answer's file and its done event carrying the usage, and the vendor's refusals.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { speechSeconds, speechUsage } from '../../src/sim/openai-speech.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await (await fetch(`${sim.url}/__sim/reset`, { method: 'POST' })).arrayBuffer(); });

async function speech(body: Record<string, unknown>): Promise<{ status: number; type: string; data: Buffer }> {
  const res = await fetch(`${sim.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', data: Buffer.from(await res.arrayBuffer()) };
}

describe('OpenAI POST /v1/audio/speech (simulator)', () => {
  it('answers each format with its media type, as long as the text takes to say', async () => {
    const types = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };
    for (const [format, type] of Object.entries(types)) {
      const a = await speech({ model: 'tts-1', voice: 'alloy', input: 'Hello there.', response_format: format });
      expect([a.status, a.type], format).toEqual([200, type]);
    }
    // pcm: 24 kHz 16-bit mono, so the byte count follows the duration (and halves at double speed).
    const slow = await speech({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(30), response_format: 'pcm' });
    const fast = await speech({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(30), response_format: 'pcm', speed: 2 });
    expect([slow.data.length, fast.data.length]).toEqual([96_000, 48_000]);
  });

  it('gpt-4o-mini-tts with stream_format sse: the deltas join into the plain answer, the done event has the usage', async () => {
    const body = { model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Speak to me.', instructions: 'Warmly.', response_format: 'wav' };
    const plain = await speech(body);
    const sse = await speech({ ...body, stream_format: 'sse' });
    expect(sse.type).toMatch(/^text\/event-stream/);
    const events = sse.data.toString('utf8').split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, '')) as { type: string; audio?: string; usage?: unknown });
    const audio = Buffer.concat(events.filter((e) => e.type === 'speech.audio.delta').map((e) => Buffer.from(e.audio!, 'base64')));
    expect(audio.equals(plain.data)).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage: speechUsage(body.input, body.instructions, speechSeconds(body.input)) });
  });

  it('refuses what createSpeech refuses, in the OpenAI error shape', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ model: 'tts-1', voice: 'alloy', input: 'Hi.', instructions: 'Loud.' }, 400, 'instructions'],
      [{ model: 'tts-1-hd', voice: 'alloy', input: 'Hi.', stream_format: 'sse' }, 400, 'stream_format'],
      [{ model: 'tts-1', voice: 'george', input: 'Hi.' }, 400, 'voice'],
      [{ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4097) }, 400, 'input'],
      [{ model: 'tts-1', voice: 'alloy', input: 'Hi.', speed: 4.5 }, 400, 'speed'],
      [{ model: 'tts-1', voice: 'alloy', input: 'Hi.', colour: 'red' }, 400, 'colour'],
      [{ model: 'tts-2', voice: 'alloy', input: 'Hi.' }, 404, 'model'],
    ];
    for (const [body, status, param] of cases) {
      const a = await speech(body);
      expect(a.status, JSON.stringify(body)).toBe(status);
      expect((JSON.parse(a.data.toString('utf8')) as { error: { param: string } }).error.param).toBe(param);
    }
  });
});
