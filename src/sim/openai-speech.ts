/**
 * OpenAI's text to speech in the simulator (createSpeech, `POST /v1/audio/speech`): JSON in, the
 * audio file out, silent and as long as the text would take to say (CHARS_PER_SECOND, divided by
 * `speed`), in the asked `response_format` (speech-audio.ts). `stream_format: sse` (not on tts-1 or
 * tts-1-hd) answers `speech.audio.delta` events carrying the file in base64 pieces, then
 * `speech.audio.done` with the usage: input tokens the o200k tokens of `input` and `instructions` plus
 * SIM_TTS_PROMPT_TOKENS of framing, output tokens SIM_TTS_AUDIO_TOKENS_PER_SECOND per started second
 * of audio. The plain answer carries no usage (as the vendor's). OpenAI-shaped 400s for what the spec
 * refuses: an unknown field or voice, `input` over 4096 characters, `instructions` or SSE on tts-1 and
 * tts-1-hd, a speed outside 0.25 to 4; 404 for an unknown model. Faults are keyed by `model`.
 */
import { countTextTokens } from '../tokenize.js';
import { sendBytes, type RawRequest } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import { CHARS_PER_SECOND } from './elevenlabs.js';
import type { SimRoute } from './exchange.js';
import { openaiError, openaiFaultResponse, unparsableJson } from './openai-route.js';
import { SPEECH_FILES } from './speech-audio.js';
import { isRecord, type Rec } from './text.js';

/** The speech models the simulator knows; `sse`: the model streams SSE and takes instructions. */
export const SIM_TTS_MODELS: Readonly<Record<string, { sse: boolean }>> = {
  'tts-1': { sse: false }, 'tts-1-hd': { sse: false }, 'gpt-4o-mini-tts': { sse: true }, 'gpt-4o-mini-tts-2025-12-15': { sse: true },
};
/** The built-in voices of createSpeech (VoiceIdsShared and the text-to-speech guide). */
export const SIM_TTS_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;
/** Audio output tokens per started second of speech (OpenAI's estimate is about 21). */
export const SIM_TTS_AUDIO_TOKENS_PER_SECOND = 20;
/** Input tokens the simulated vendor adds for its own framing of the prompt. */
export const SIM_TTS_PROMPT_TOKENS = 4;
const FIELDS = ['model', 'input', 'instructions', 'voice', 'response_format', 'speed', 'stream_format'];

/** The seconds of speech `input` takes at `speed`. */
export function speechSeconds(input: string, speed = 1): number {
  return Math.max(0.5, [...input].length / CHARS_PER_SECOND) / speed;
}

/** The simulated usage of a request: `{input_tokens, output_tokens, total_tokens}`. */
export function speechUsage(input: string, instructions: string | undefined, seconds: number): { input_tokens: number; output_tokens: number; total_tokens: number } {
  const inputTokens = countTextTokens(input) + countTextTokens(instructions ?? '') + SIM_TTS_PROMPT_TOKENS;
  const output = Math.ceil(seconds) * SIM_TTS_AUDIO_TOKENS_PER_SECOND;
  return { input_tokens: inputTokens, output_tokens: output, total_tokens: inputTokens + output };
}

type Problem = { message: string; param: string | null; status?: number };

/** What createSpeech refuses in `body`, or null. */
function problem(body: Rec): Problem | null {
  const extra = Object.keys(body).find((k) => !FIELDS.includes(k));
  if (extra) return { message: `Unrecognized request argument supplied: ${extra}`, param: extra };
  const model = body.model;
  if (typeof model !== 'string') return { message: 'you must provide a model parameter', param: 'model' };
  const spec = SIM_TTS_MODELS[model];
  if (!spec) return { message: `The model \`${model}\` does not exist or you do not have access to it.`, param: 'model', status: 404 };
  if (typeof body.input !== 'string' || body.input === '') return { message: "Missing required parameter: 'input'.", param: 'input' };
  if ([...body.input].length > 4096) return { message: "Invalid 'input': string too long. Expected a string with maximum length 4096.", param: 'input' };
  const voice = body.voice;
  if (!(typeof voice === 'string' && (SIM_TTS_VOICES as readonly string[]).includes(voice)) && !(isRecord(voice) && typeof voice.id === 'string')) {
    return { message: `Invalid value for 'voice': ${JSON.stringify(voice)}. Supported values are: ${SIM_TTS_VOICES.map((v) => `'${v}'`).join(', ')}.`, param: 'voice' };
  }
  const format = body.response_format ?? 'mp3';
  if (typeof format !== 'string' || !SPEECH_FILES[format]) return { message: `Invalid value for 'response_format': ${JSON.stringify(format)}.`, param: 'response_format' };
  const speed = body.speed ?? 1;
  if (typeof speed !== 'number' || speed < 0.25 || speed > 4) return { message: "Invalid 'speed': expected a number from 0.25 to 4.0.", param: 'speed' };
  if (body.instructions !== undefined && (typeof body.instructions !== 'string' || !spec.sse)) return { message: `Instructions are not supported with ${model}.`, param: 'instructions' };
  const stream = body.stream_format ?? 'audio';
  if (stream !== 'audio' && stream !== 'sse') return { message: `Invalid value for 'stream_format': ${JSON.stringify(stream)}.`, param: 'stream_format' };
  if (stream === 'sse' && !spec.sse) return { message: `stream_format 'sse' is not supported with ${model}.`, param: 'stream_format' };
  return null;
}

/** `pieces` consecutive slices of `data` (fewer when it is shorter), each base64 on its own. */
function base64Pieces(data: Buffer, pieces: number): string[] {
  const size = Math.max(1, Math.ceil(data.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < data.length; i += size) out.push(data.subarray(i, i + size).toString('base64'));
  return out;
}

/** The route over the request's raw bytes (the plain answer is binary, written as bytes). */
function speechRoute(raw: RawRequest): SimRoute {
  return {
    faultResponse: openaiFaultResponse,
    async handle(x) {
      if (!x.parsed) return x.sendJson(400, unparsableJson());
      if (!isRecord(x.body)) return x.sendJson(400, openaiError('The request body must be a JSON object.', 'invalid_request_error'));
      const body = x.body;
      const refused = problem(body);
      if (refused) return x.sendJson(refused.status ?? 400, openaiError(refused.message, 'invalid_request_error', refused.param, refused.status === 404 ? 'model_not_found' : null));
      const seconds = speechSeconds(body.input as string, (body.speed as number | undefined) ?? 1);
      const file = SPEECH_FILES[(body.response_format as string | undefined) ?? 'mp3']!;
      const audio = file.silent(seconds);
      if (body.stream_format !== 'sse') {
        // A malformed answer (fault error_after_chunks): a 200 whose bytes are not audio (a cut-off JSON text).
        if (x.fault.error_after_chunks !== undefined) return sendBytes(raw.sink, {}, Buffer.from('{"error": {"message": "simulated'), { 'content-type': file.contentType });
        return sendBytes(raw.sink, x.fault, audio, { 'content-type': file.contentType });
      }
      const usage = speechUsage(body.input as string, body.instructions as string | undefined, seconds);
      const deltas = base64Pieces(audio, 4).map((b64) => `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: b64 })}\n\n`);
      const done = `data: ${JSON.stringify({ type: 'speech.audio.done', ...(x.fault.omit_usage === true ? {} : { usage }) })}\n\n`;
      const error = (): string => `data: ${JSON.stringify({ type: 'error', error: { message: 'simulated upstream error', type: 'server_error' } })}\n\n`;
      await x.stream([...deltas, done], { error, finalEvent: true });
    },
  };
}

/** `POST /v1/audio/speech`, faults keyed by the body's `model`. */
export function matchOpenaiSpeech(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST' || url.pathname !== '/v1/audio/speech') return undefined;
  let model: unknown;
  try { model = (JSON.parse(raw.bytes.toString('utf8')) as Rec).model; } catch { model = undefined; }
  return { route: speechRoute(raw), faultKey: typeof model === 'string' ? model : 'tts-1' };
}
