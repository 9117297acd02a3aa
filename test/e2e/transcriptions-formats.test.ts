/**
 * Transcription answer formats and streaming end to end (issue 31 item 7; spec 4.8, 1): response_format
 * text, srt and vtt answered as the vendor does (its plain text and content type) and billed as JSON
 * answers are; a token model's text rendered by the gateway from the JSON it asked for (the JSON
 * carries the usage billed); `stream: true` on the token models passed on as the vendor's SSE events,
 * billed from the usage of transcript.text.done. Refusals (srt or verbose_json on a token model,
 * stream on whisper-1) are 400s naming the parameter, with nothing reserved or charged.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { divideRounded, formatUsd } from '../../src/money.js';
import { SIM_AUDIO_TOKENS_PER_SECOND } from '../../src/sim/openai-audio.js';
import { countTextTokens } from '../../src/tokenize.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched } from '../helpers/native.js';
import { wavOfTenths } from '../helpers/wav.js';

/** gpt-4o-mini-transcribe's charge in nano-USD: $3 input and $5 output per 1M tokens, rounded once. */
const miniNano = (input: number, output: number): bigint => divideRounded(BigInt(input) * 3_000_000_000n + BigInt(output) * 5_000_000_000n, 1_000_000n);

describeStore(`transcription formats and streams (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const form = (fields: Record<string, string>, tenths = 25): FormData => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append('file', new Blob([new Uint8Array(wavOfTenths(tenths))], { type: 'audio/wav' }), 'a.wav');
    return f;
  };
  const post = (key: string, path: string, body: FormData): Promise<Response> => fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
  const lastForm = async (): Promise<string> => JSON.stringify(((await (await fetch(`${t.sim.url}/__sim/last`)).json()) as { body: unknown }).body);

  it('whisper-1 text, srt and vtt: the vendor\'s plain text and content type, each billed by the started second', async () => {
    const account = await t.account('1');
    const expected: Record<string, RegExp> = {
      text: /^Simulated transcription of 2\.5 seconds of audio\.\n$/,
      srt: /^1\n00:00:00,000 --> 00:00:02,500\nSimulated transcription of 2\.5 seconds of audio\.\n\n$/,
      vtt: /^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.500\nSimulated transcription/,
    };
    for (const [format, pattern] of Object.entries(expected)) {
      const res = await post(account.key, '/v1/audio/transcriptions', form({ model: 'whisper-1', response_format: format }));
      expect(res.status, format).toBe(200);
      expect(res.headers.get('content-type'), format).toBe('text/plain; charset=utf-8');
      expect(await res.text(), format).toMatch(pattern);
      // 2.5 s: 3 started seconds at $0.006 a minute.
      expect(res.headers.get('x-gateway-cost-usd'), format).toBe('0.0003');
      expect(res.headers.get('x-gateway-audio-seconds'), format).toBe('3');
    }
    const translated = await post(account.key, '/v1/audio/translations', form({ model: 'whisper-1', response_format: 'srt' }));
    expect(await translated.text()).toMatch(/^1\n00:00:00,000 --> 00:00:02,500\nSimulated English translation/);
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => [r.model, r.unit, r.quantity, r.amountNano])).toEqual(Array(4).fill(['whisper-1', 'second', 3n, 300_000n]));
  });

  it('gpt-4o-mini-transcribe text: JSON asked upstream, its text answered as text/plain, its usage billed', async () => {
    const account = await t.account('1');
    const client = new OpenAI({ apiKey: account.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', response_format: 'text', file: await toFile(wavOfTenths(25), 'a.wav', { type: 'audio/wav' }) }).withResponse();
    const text = 'Simulated transcription of 2.5 seconds of audio.';
    expect(data).toBe(`${text}\n`);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await lastForm()).toContain('name=\\"response_format\\"\\r\\n\\r\\njson\\r\\n');
    const input = 3 * SIM_AUDIO_TOKENS_PER_SECOND;
    const output = countTextTokens(text);
    const amount = miniNano(input, output);
    expect(response.headers.get('x-gateway-cost-usd')).toBe(formatUsd(amount));
    expect((await t.usage(account.id)).data).toMatchObject([{ kind: 'tokens', model: 'gpt-4o-mini-transcribe', amountNano: amount, details: { input, output } }]);
  });

  it('stream: true on gpt-4o-mini-transcribe: the vendor\'s delta and done events, billed from the final usage', async () => {
    const account = await t.account('1');
    const client = new OpenAI({ apiKey: account.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const stream = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', stream: true, file: await toFile(wavOfTenths(25), 'a.wav', { type: 'audio/wav' }) });
    let deltas = '';
    let done: { text: string; usage?: { input_tokens: number; output_tokens: number } } | undefined;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas += event.delta;
      if (event.type === 'transcript.text.done') done = event as { text: string; usage?: { input_tokens: number; output_tokens: number } };
    }
    expect(done!.text).toBe('Simulated transcription of 2.5 seconds of audio.');
    expect(deltas).toBe(done!.text);
    expect(await lastForm()).toContain('name=\\"stream\\"\\r\\n\\r\\ntrue\\r\\n');
    const { input_tokens: input, output_tokens: output } = done!.usage!;
    expect((await t.usage(account.id)).data).toMatchObject([{ kind: 'tokens', model: 'gpt-4o-mini-transcribe', amountNano: miniNano(input, output), details: { input, output } }]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - miniNano(input, output), heldNano: 0n, openHolds: 0 });
  });

  it('a stream that fails before its first text charges nothing', async () => {
    const account = await t.account('1');
    await t.fault({ error_after_chunks: 0, times: 2 }, 'gpt-4o-transcribe');
    const res = await post(account.key, '/v1/audio/transcriptions', form({ model: 'gpt-4o-transcribe', stream: 'true' }));
    expect(res.status).toBeGreaterThanOrEqual(500);
    await res.text();
    await expectUntouched(t, account, 1_000_000_000n);
  });

  it('refuses srt, vtt and verbose_json on the token models and stream on whisper-1, before anything is reserved', async () => {
    const account = await t.account('1');
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ model: 'gpt-4o-transcribe', response_format: 'srt' }, 'response_format', 'json, text'],
      [{ model: 'gpt-4o-mini-transcribe', response_format: 'vtt' }, 'response_format', 'json, text'],
      [{ model: 'gpt-4o-transcribe', response_format: 'verbose_json' }, 'response_format', 'json, text'],
      [{ model: 'whisper-1', stream: 'true' }, 'stream', 'false'],
    ];
    for (const [fields, param, mention] of cases) {
      const res = await post(account.key, '/v1/audio/transcriptions', form(fields));
      const body = (await res.json()) as { error: { code: string; param: string; message: string } };
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(body.error, JSON.stringify(fields)).toMatchObject({ code: 'unsupported_parameter', param });
      expect(body.error.message).toContain(mention);
    }
    await expectUntouched(t, account, 1_000_000_000n);
  });
});
