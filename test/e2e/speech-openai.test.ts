/**
 * POST /v1/audio/speech on OpenAI's models end to end (issue 31 item 6; spec 4.8, 1, 7): the official
 * `openai` SDK through the gateway to the simulator playing createSpeech. tts-1 and tts-1-hd are billed
 * per character ($15 and $30 per 1M), each format answered with its media type; gpt-4o-mini-tts is
 * asked for SSE, its audio joined into the client's file and billed exactly as its `speech.audio.done`
 * usage says ($0.60 per 1M input, $12 per 1M audio output tokens), under a hold that covers the worst
 * case. `alloy` works on ElevenLabs too. Every refusal is a 4xx with nothing reserved; an upstream
 * fault, a cut stream or a done event without usage charges nothing.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { divideRounded, formatUsd } from '../../src/money.js';
import { speechSeconds, speechUsage } from '../../src/sim/openai-speech.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectBrokenAnswer, expectUntouched, postJson } from '../helpers/native.js';

/** The charge of a gpt-4o-mini-tts usage in nano-USD: $0.60 and $12 per 1M tokens, rounded once. */
const miniTtsNano = (u: { input_tokens: number; output_tokens: number }): bigint => divideRounded(BigInt(u.input_tokens) * 600_000_000n + BigInt(u.output_tokens) * 12_000_000_000n, 1_000_000n);

describeStore(`speech on OpenAI models (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const lastUpstream = async (): Promise<{ path: string; body: any }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;

  it('tts-1 answers MP3 by default, billed $15 per 1M characters; the body goes to createSpeech as sent', async () => {
    const account = await t.account('1');
    const input = 'Hello from tts-1, with an emoji: 😀.';
    const raw = await client(account.key).audio.speech.create({ model: 'tts-1', voice: 'alloy', input, speed: 1.5 }).asResponse();
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('audio/mpeg');
    const data = Buffer.from(await raw.arrayBuffer());
    expect(data[0]).toBe(0xff);
    const characters = [...input].length;
    // 36 code points at $15 per 1M: $0.00054.
    const amount = BigInt(characters) * 15_000n;
    expect(raw.headers.get('x-gateway-characters')).toBe(String(characters));
    expect(raw.headers.get('x-gateway-cost-usd')).toBe(formatUsd(amount));
    const rows = (await t.usage(account.id)).data;
    expect(rows).toMatchObject([{ kind: 'speech', unit: 'character', quantity: BigInt(characters), amountNano: amount, model: 'tts-1' }]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - amount, heldNano: 0n, openHolds: 0 });
    expect(await lastUpstream()).toMatchObject({ path: '/v1/audio/speech', body: { model: 'tts-1', input, voice: 'alloy', response_format: 'mp3', speed: 1.5 } });
    expect((await lastUpstream()).body.stream_format).toBeUndefined();
  });

  it('tts-1-hd answers each of the six formats with its media type and first bytes, at $30 per 1M characters', async () => {
    const account = await t.account('1');
    const heads: Record<string, [string, (b: Buffer) => boolean]> = {
      mp3: ['audio/mpeg', (b) => b[0] === 0xff], opus: ['audio/opus', (b) => b.toString('latin1', 0, 4) === 'OggS'],
      aac: ['audio/aac', (b) => b[0] === 0xff && (b[1]! & 0xf6) === 0xf0], flac: ['audio/flac', (b) => b.toString('latin1', 0, 4) === 'fLaC'],
      wav: ['audio/wav', (b) => b.toString('latin1', 8, 12) === 'WAVE'], pcm: ['audio/pcm', (b) => b.length > 0],
    };
    for (const [format, [type, looks]] of Object.entries(heads)) {
      const raw = await client(account.key).audio.speech.create({ model: 'tts-1-hd', voice: 'shimmer', input: 'Ten chars.', response_format: format as 'mp3' }).asResponse();
      expect(raw.headers.get('content-type'), format).toBe(type);
      expect(looks(Buffer.from(await raw.arrayBuffer())), format).toBe(true);
      expect(raw.headers.get('x-gateway-cost-usd'), format).toBe('0.0003');
    }
    expect((await t.usage(account.id)).data.map((r) => r.amountNano)).toEqual(Array(6).fill(300_000n));
  });

  it('gpt-4o-mini-tts: SSE asked upstream, the audio file back, billed exactly the reported usage', async () => {
    const account = await t.account('1');
    const body = { model: 'gpt-4o-mini-tts', voice: 'ballad', input: 'A calm sentence for the token model.', instructions: 'Speak calmly.', response_format: 'wav' as const };
    const raw = await client(account.key).audio.speech.create(body).asResponse();
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('audio/wav');
    const data = Buffer.from(await raw.arrayBuffer());
    expect(data.toString('latin1', 0, 4)).toBe('RIFF');
    expect((await lastUpstream()).body).toEqual({ ...body, stream_format: 'sse' });
    const usage = speechUsage(body.input, body.instructions, speechSeconds(body.input));
    const amount = miniTtsNano(usage);
    expect(raw.headers.get('x-gateway-cost-usd')).toBe(formatUsd(amount));
    const rows = (await t.usage(account.id)).data;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'tokens', unit: 'token', model: 'gpt-4o-mini-tts', amountNano: amount, details: { input: usage.input_tokens, output: usage.output_tokens } });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - amount, heldNano: 0n, openHolds: 0 });
  });

  it('the gpt-4o-mini-tts hold covers the worst case: 4096 characters of instructions-laden input at speed 0.25', async () => {
    const input = 'x'.repeat(4096);
    const instructions = 'Slowly. '.repeat(500);
    const body = { model: 'gpt-4o-mini-tts', voice: 'verse', input, instructions, speed: 0.25 };
    // The 402 names what the request needs reserved; the same request's charge stays under it.
    const poor = await t.account('0.01');
    const refused = await postJson(t, '/v1/audio/speech', poor.key, body);
    expect(refused.status).toBe(402);
    const needed = /needs \$([0-9.]+) reserved/.exec(refused.json.error.message)?.[1];
    expect(needed, refused.json.error.message).toBeDefined();
    await expectUntouched(t, poor, 10_000_000n);
    const rich = await t.account('5');
    const res = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${rich.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const [row] = (await t.usage(rich.id)).data;
    expect(row!.amountNano).toBe(miniTtsNano(speechUsage(input, instructions, speechSeconds(input, 0.25))));
    expect(Number(formatUsd(row!.amountNano))).toBeLessThan(Number(needed));
  });

  it('alloy on an ElevenLabs model goes to the voice the route maps it to', async () => {
    const account = await t.account('1');
    const raw = await client(account.key).audio.speech.create({ model: 'eleven_multilingual_v2', voice: 'alloy', input: 'Hi.' }).asResponse();
    expect(raw.headers.get('content-type')).toBe('audio/mpeg');
    await raw.arrayBuffer();
    expect((await lastUpstream()).path).toBe('/v1/text-to-speech/SAz9YHcvj6GT2YYXdXww');
  });

  it('refuses with a 4xx in the OpenAI error shape before anything is reserved', async () => {
    const account = await t.account('1');
    const speech = (body: Record<string, unknown>) => postJson(t, '/v1/audio/speech', account.key, { model: 'tts-1', voice: 'alloy', input: 'Hi.', ...body });
    const cases: Array<[Record<string, unknown>, string, string?]> = [
      [{ voice: 'george' }, 'voice', 'alloy, ash, ballad'], [{ voice: 'ballad' }, 'voice', 'alloy, ash, coral'], [{ model: 'tts-1-hd', voice: 'verse' }, 'voice'],
      [{ instructions: 'Whisper.' }, 'instructions'], [{ model: 'tts-1-hd', instructions: 'Whisper.' }, 'instructions'],
      [{ response_format: 'ogg' }, 'response_format'], [{ stability: 0.5 }, 'stability'], [{ model: 'gpt-4o-mini-tts', use_speaker_boost: true }, 'use_speaker_boost'],
      [{ speed: 5 }, 'speed'], [{ stream_format: 'sse' }, 'stream_format'], [{ model: 'gpt-4o-mini-tts', voice: 'rachel' }, 'voice'],
    ];
    for (const [body, param, mention] of cases) {
      const a = await speech(body);
      expect(a.status, JSON.stringify(body)).toBe(400);
      expect(a.json.error, JSON.stringify(body)).toMatchObject({ param, message: expect.any(String), type: expect.any(String) });
      if (mention) expect(a.json.error.message).toContain(mention);
    }
    expect((await speech({ instructions: 'Whisper.' })).json.error.code).toBe('unsupported_parameter');
    await expectUntouched(t, account, 1_000_000_000n);
  });

  it('charges nothing when the vendor fails, the SSE is cut, or its done event has no usage', async () => {
    const account = await t.account('1');
    const body = { model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Nothing to pay.' };
    for (const fault of [{ status: 500, times: 2 }, { truncate_after_chunks: 2 }, { omit_usage: true }, { error_after_chunks: 1 }]) {
      await t.clearFaults();
      await t.fault(fault, 'gpt-4o-mini-tts');
      const a = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(a.status, JSON.stringify(fault)).toBeGreaterThanOrEqual(500);
      expect(((await a.json()) as { error: { code: string } }).error.code, JSON.stringify(fault)).toMatch(/^upstream_/);
    }
    await t.clearFaults();
    await t.fault({ truncate_after_chunks: 2 }, 'tts-1');
    const cut = await fetch(`${t.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, model: 'tts-1' }) });
    // tts-1 streams through (its price is known from the request): a 200 whose body breaks off.
    await expectBrokenAnswer(cut);
    await expectUntouched(t, account, 1_000_000_000n);
  });
});
