/**
 * OpenAI's speech to text in the simulator (spec 4.8; vendor spec createTranscription and
 * createTranslation): `POST /v1/audio/transcriptions` and `/v1/audio/translations`, multipart with
 * `model`, `file` and the audio parameters. The audio's duration is read with music-metadata; the
 * text is deterministic (it names the duration). Token models (gpt-4o-transcribe family) answer JSON
 * (or text) only, or with `stream: true` transcript.text.delta events and a transcript.text.done, with `usage: {type: tokens}` (audio tokens: 10 per started second; text tokens: the prompt's
 * o200k tokens; output: the text's); whisper-1 also answers verbose_json (segments, words), text, srt
 * and vtt (text/plain), with `usage: {type: duration, seconds}`; translations take whisper-1 only.
 * OpenAI-shaped 400s for a missing or unreadable file, an unknown field and a format a model lacks;
 * 404 for an unknown model. Faults are keyed by the form's `model`.
 */
import { Busboy } from '@fastify/busboy';
import { parseBuffer } from 'music-metadata';
import { countTextTokens } from '../tokenize.js';
import type { SimMatch } from './azure-content-safety.js';
import type { RawRequest } from './anthropic-files.js';
import type { Exchange, SimRoute } from './exchange.js';
import { sendJsonAnswer } from './native.js';
import { openaiError, openaiFaultResponse } from './openai-route.js';

/** Speech models the simulator knows: whether billed by tokens (JSON only) or by duration. */
export const SIM_AUDIO_MODELS: Readonly<Record<string, { tokens: boolean }>> = {
  'whisper-1': { tokens: false }, 'gpt-4o-transcribe': { tokens: true }, 'gpt-4o-mini-transcribe': { tokens: true },
};
/** Audio tokens per second the token models report. */
export const SIM_AUDIO_TOKENS_PER_SECOND = 10;
const FIELDS: Record<'transcriptions' | 'translations', readonly string[]> = {
  transcriptions: ['model', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities[]', 'stream', 'include[]'],
  translations: ['model', 'prompt', 'response_format', 'temperature'],
};

interface Form { fields: Record<string, string[]>; file: { filename: string; mimeType: string; data: Buffer } | null; error?: string }

function parseForm(bytes: Buffer, contentType: string | undefined): Promise<Form> {
  return new Promise((resolve) => {
    const form: Form = { fields: {}, file: null };
    let parser: ReturnType<typeof Busboy>;
    try { parser = Busboy({ headers: { 'content-type': contentType ?? '' }, limits: { fileSize: 32 * 1024 * 1024 } }); } catch {
      resolve({ ...form, error: 'Content-Type must be multipart/form-data with a boundary.' });
      return;
    }
    const pending: Array<Promise<void>> = [];
    parser.on('field', (name, value) => { (form.fields[name] ??= []).push(value); });
    parser.on('file', (name, stream, filename, _enc, mimeType) => {
      const chunks: Buffer[] = [];
      pending.push(new Promise((done) => {
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => { if (name === 'file') form.file = { filename, mimeType, data: Buffer.concat(chunks) }; done(); });
      }));
    });
    parser.on('error', () => resolve({ ...form, error: 'The multipart body is malformed.' }));
    parser.on('finish', () => { void Promise.all(pending).then(() => resolve(form)); });
    parser.end(bytes);
  });
}

async function durationOf(data: Buffer): Promise<number | null> {
  try {
    const seconds = (await parseBuffer(data, undefined, { duration: true, skipCovers: true })).format.duration;
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds : null;
  } catch { return null; }
}

/** The timestamp `h:mm:ss,mmm` (srt) or `hh:mm:ss.mmm` (vtt). */
function stamp(seconds: number, sep: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${sep}${pad(ms % 1000, 3)}`;
}

function sendText(raw: RawRequest, text: string, type: string): void {
  const { res, isGone } = raw.sink;
  if (isGone()) return;
  res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A streamed transcription (CreateTranscriptionResponseStreamEvent): one `transcript.text.delta` per
 * word (the first one first, as the spec says), then `transcript.text.done` with the text and usage.
 */
function streamTranscript(x: Exchange, text: string, usage: Record<string, unknown> | null): Promise<void> {
  const words = text.split(/(?<= )/);
  const deltas = words.map((delta) => `data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`);
  const done = `data: ${JSON.stringify({ type: 'transcript.text.done', text, ...(usage ? { usage } : {}) })}\n\n`;
  const error = (): string => `data: ${JSON.stringify({ type: 'error', error: { message: 'simulated upstream error', type: 'server_error' } })}\n\n`;
  return x.stream([...deltas, done], { error, finalEvent: true });
}

/** The simulator route of one task, over the request's raw bytes. */
function audioRoute(task: 'transcriptions' | 'translations', raw: RawRequest): SimRoute {
  return {
    faultResponse: openaiFaultResponse,
    async handle(x: Exchange) {
      const bad = (message: string, param: string | null, status = 400): void => x.sendJson(status, openaiError(message, 'invalid_request_error', param, status === 404 ? 'model_not_found' : null));
      const form = await parseForm(raw.bytes, x.headers['content-type']);
      if (form.error) return bad(form.error, null);
      const field = (name: string): string | undefined => form.fields[name]?.[0];
      const extra = Object.keys(form.fields).find((k) => !FIELDS[task].includes(k));
      if (extra) return bad(`Unrecognized request argument supplied: ${extra}`, extra);
      const model = field('model');
      if (!model) return bad('you must provide a model parameter', 'model');
      const spec = SIM_AUDIO_MODELS[model];
      if (!spec || (task === 'translations' && spec.tokens)) return bad(`The model \`${model}\` does not exist or you do not have access to it.`, 'model', 404);
      if (!form.file) return bad("Missing required parameter: 'file'.", 'file');
      const seconds = await durationOf(form.file.data);
      if (seconds === null) return bad('Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm', 'file');
      const format = field('response_format') ?? 'json';
      if (!['json', 'text', 'srt', 'verbose_json', 'vtt'].includes(format)) return bad(`'${format}' is not one of ['json', 'text', 'srt', 'verbose_json', 'vtt']`, 'response_format');
      if (spec.tokens && format !== 'json' && format !== 'text') return bad(`response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text'.`, 'response_format');
      const text = `Simulated ${task === 'translations' ? 'English translation' : 'transcription'} of ${seconds.toFixed(1)} seconds of audio.`;
      // createTranscription: "Streaming is not supported for the whisper-1 model and will be ignored."
      const streams = spec.tokens && ['true', '1'].includes(field('stream') ?? 'false');
      if (format === 'text' && !streams) return sendText(raw, `${text}\n`, 'text/plain');
      if (format === 'srt') return sendText(raw, `1\n${stamp(0, ',')} --> ${stamp(seconds, ',')}\n${text}\n\n`, 'text/plain');
      if (format === 'vtt') return sendText(raw, `WEBVTT\n\n${stamp(0, '.')} --> ${stamp(seconds, '.')}\n${text}\n\n`, 'text/plain');
      const omit = x.fault.omit_usage === true;
      if (spec.tokens) {
        const audio = Math.ceil(seconds) * SIM_AUDIO_TOKENS_PER_SECOND;
        const prompt = countTextTokens(field('prompt') ?? '');
        const output = countTextTokens(text);
        const usage = { type: 'tokens', input_tokens: audio + prompt, input_token_details: { text_tokens: prompt, audio_tokens: audio }, output_tokens: output, total_tokens: audio + prompt + output };
        if (streams) return streamTranscript(x, text, omit ? null : usage);
        return sendJsonAnswer(x, { text, ...(omit ? {} : { usage }) });
      }
      const usage = omit ? {} : { usage: { type: 'duration', seconds: Math.ceil(seconds) } };
      if (format === 'json') return sendJsonAnswer(x, { text, ...usage });
      const words = (form.fields['timestamp_granularities[]'] ?? []).includes('word')
        ? { words: text.split(' ').map((word, i, all) => ({ word, start: (seconds * i) / all.length, end: (seconds * (i + 1)) / all.length })) } : {};
      const segment = { id: 0, seek: 0, start: 0, end: seconds, text: ` ${text}`, tokens: [], temperature: Number(field('temperature') ?? 0), avg_logprob: -0.2, compression_ratio: 1.2, no_speech_prob: 0.01 };
      return sendJsonAnswer(x, { task: task === 'translations' ? 'translate' : 'transcribe', language: task === 'translations' ? 'english' : (field('language') ?? 'english'), duration: seconds, text, segments: [segment], ...words, ...usage });
    },
  };
}

/** `POST /v1/audio/transcriptions` and `/v1/audio/translations`, faults keyed by the form's model. */
export function matchOpenaiAudio(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST') return undefined;
  const task = url.pathname === '/v1/audio/transcriptions' ? 'transcriptions' : url.pathname === '/v1/audio/translations' ? 'translations' : null;
  if (!task) return undefined;
  // The form's `model` field, read without parsing the whole body (the fault key is needed first).
  const model = /name="model"\r\n(?:[^\r\n]*\r\n)*?\r\n([^\r\n]*)\r\n/.exec(raw.bytes.toString('latin1'))?.[1] ?? 'openai-audio';
  return { route: audioRoute(task, raw), faultKey: model };
}
