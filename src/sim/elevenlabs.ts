/**
 * ElevenLabs in the simulator (docs/vendors/elevenlabs.md; spec `shared/specs/elevenlabs/openapi.json`
 * and its 2026-08-22 copy): `POST /v1/text-to-speech/{voice_id}` and `POST /v1/sound-generation`,
 * answered with valid silent MP3 frames (MPEG-1 Layer III, 44.1 kHz, 128 kbit/s: output_format
 * mp3_44100_128) whose length follows the text (speech) or the requested duration (sound effects).
 * Bad input gets the vendor's shapes: a 422 `HTTPValidationError` `{detail: [{loc, msg, type}]}`, or
 * `{detail: {status, message}}` (unknown voice 404, unknown model 400). An `xi-api-key` header is
 * accepted (never checked: the gateway sends none to the simulator); an empty one is a 401.
 * Faults scope by `model_id` (POST /__sim/faults {model: "eleven_multilingual_v2"}).
 */
import type http from 'node:http';
import { sendBytes, type RawRequest } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange } from './exchange.js';
import { seededUuid } from './native.js';
import { isRecord, type Rec } from './text.js';

/** Speech models the simulator knows (the specs' text-to-speech model ids). */
export const TTS_MODELS = ['eleven_multilingual_v2', 'eleven_flash_v2_5', 'eleven_flash_v2', 'eleven_turbo_v2_5', 'eleven_turbo_v2', 'eleven_v3', 'eleven_v3_conversational'] as const;
/** The sound-effects model (`SFXModelId` enum of the 2026-08-22 spec). */
export const SFX_MODEL = 'eleven_text_to_sound_v2';
/** Output formats of the spec's `output_format` enum; only MP3 at 44.1 kHz / 128 kbit/s is simulated. */
const MP3_FORMAT = 'mp3_44100_128';
/** Simulated speaking rate: characters per second of speech. */
export const CHARS_PER_SECOND = 15;

const SAMPLES_PER_FRAME = 1152;
const SAMPLE_RATE = 44_100;
/** 144 x 128000 / 44100, rounded down (no padding bit). */
const FRAME_BYTES = 417;

/** Frames of `seconds` of audio (at least one). */
export function frameCount(seconds: number): number {
  return Math.max(1, Math.round((seconds * SAMPLE_RATE) / SAMPLES_PER_FRAME));
}

/** Seconds of audio `frames` MP3 frames play. */
export function framesDuration(frames: number): number {
  return (frames * SAMPLES_PER_FRAME) / SAMPLE_RATE;
}

/** `seconds` of silent MP3: each frame a header FF FB 90 C4 (sync, MPEG-1, Layer III, no CRC, 128 kbit/s, 44.1 kHz, mono) and zeroed side info and data. */
export function silentMp3(seconds: number): Buffer {
  const frames = frameCount(seconds);
  const data = Buffer.alloc(frames * FRAME_BYTES);
  for (let i = 0; i < frames; i++) data.set([0xff, 0xfb, 0x90, 0xc4], i * FRAME_BYTES);
  return data;
}

type Problem = { loc: Array<string | number>; msg: string; type: string };
const missing = (field: string): Problem => ({ loc: ['body', field], msg: 'Field required', type: 'missing' });
const invalid = (loc: Array<string | number>, msg: string, type = 'value_error'): Problem => ({ loc, msg, type });

/** ElevenLabs' `{detail: {status, message}}` for a fault status (429 with retry-after: 7). */
export function elevenlabsFaultResponse(status: number): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const code = status === 429 ? 'too_many_concurrent_requests' : status === 401 ? 'invalid_api_key' : status >= 500 ? 'internal_error' : 'invalid_request';
  return { body: { detail: { status: code, message: `simulated error (status ${status})` } }, headers: status === 429 ? { 'retry-after': '7' } : {} };
}

function numberIn(body: Rec, field: string, min: number, max: number, loc: Array<string | number>, problems: Problem[]): void {
  const v = body[field];
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isFinite(v)) problems.push(invalid([...loc, field], 'Input should be a valid number', 'float_parsing'));
  else if (v < min || v > max) problems.push(invalid([...loc, field], `Value must be between ${min} and ${max}`));
}

function unknownFields(body: Rec, allowed: readonly string[], loc: Array<string | number>, problems: Problem[]): void {
  for (const key of Object.keys(body)) if (!allowed.includes(key)) problems.push(invalid([...loc, key], 'Extra inputs are not permitted', 'extra_forbidden'));
}

/** Fields the spec defines for the text-to-speech body (Body_text_to_speech_full). */
const TTS_FIELDS = ['text', 'model_id', 'language_code', 'voice_settings', 'pronunciation_dictionary_locators', 'seed', 'previous_text', 'next_text', 'previous_request_ids', 'next_request_ids', 'use_pvc_as_ivc', 'apply_text_normalization', 'apply_language_text_normalization'];
const VOICE_SETTING_FIELDS = ['stability', 'similarity_boost', 'style', 'speed', 'use_speaker_boost'];

function speechProblems(body: Rec): Problem[] {
  const problems: Problem[] = [];
  unknownFields(body, TTS_FIELDS, ['body'], problems);
  if (body.text === undefined) problems.push(missing('text'));
  else if (typeof body.text !== 'string') problems.push(invalid(['body', 'text'], 'Input should be a valid string', 'string_type'));
  const settings = body.voice_settings;
  if (settings !== undefined && settings !== null) {
    if (!isRecord(settings)) problems.push(invalid(['body', 'voice_settings'], 'Input should be a valid dictionary', 'dict_type'));
    else {
      unknownFields(settings, VOICE_SETTING_FIELDS, ['body', 'voice_settings'], problems);
      for (const f of ['stability', 'similarity_boost', 'style']) numberIn(settings, f, 0, 1, ['body', 'voice_settings'], problems);
      numberIn(settings, 'speed', 0.7, 1.2, ['body', 'voice_settings'], problems);
      const boost = settings.use_speaker_boost;
      if (boost !== undefined && boost !== null && typeof boost !== 'boolean') problems.push(invalid(['body', 'voice_settings', 'use_speaker_boost'], 'Input should be a valid boolean', 'bool_type'));
    }
  }
  return problems;
}

function soundProblems(body: Rec): Problem[] {
  const problems: Problem[] = [];
  unknownFields(body, ['text', 'loop', 'duration_seconds', 'prompt_influence', 'model_id'], ['body'], problems);
  if (body.text === undefined) problems.push(missing('text'));
  else if (typeof body.text !== 'string') problems.push(invalid(['body', 'text'], 'Input should be a valid string', 'string_type'));
  // Spec: "Must be at least 0.5 and at most 30" (prose only: the schema is a bare number).
  numberIn(body, 'duration_seconds', 0.5, 30, ['body'], problems);
  numberIn(body, 'prompt_influence', 0, 1, ['body'], problems);
  if (body.loop !== undefined && typeof body.loop !== 'boolean') problems.push(invalid(['body', 'loop'], 'Input should be a valid boolean', 'bool_type'));
  if (body.model_id !== undefined && body.model_id !== SFX_MODEL) problems.push(invalid(['body', 'model_id'], `Input should be '${SFX_MODEL}'`, 'literal_error'));
  return problems;
}

/** The common checks: JSON object body, key header, output format; then the operation's own. */
async function answerAudio(x: Exchange, raw: RawRequest, url: URL, check: (body: Rec) => Problem[] | { status: number; detail: Rec }, seconds: (body: Rec) => number, cost: (body: Rec) => number): Promise<void> {
  const key = x.headers['xi-api-key'];
  if (key !== undefined && String(key).trim() === '') return x.sendJson(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
  if (!x.parsed || !isRecord(x.body)) return x.sendJson(422, { detail: [invalid(['body'], 'Input should be a valid dictionary or object to extract fields from', 'model_attributes_type')] });
  const format = url.searchParams.get('output_format') ?? MP3_FORMAT;
  if (format !== MP3_FORMAT) return x.sendJson(422, { detail: [invalid(['query', 'output_format'], `The simulator produces only ${MP3_FORMAT}`, 'enum')] });
  const result = check(x.body);
  if (!Array.isArray(result)) return x.sendJson(result.status, { detail: result.detail });
  if (result.length) return x.sendJson(422, { detail: result });
  const headers = { 'content-type': 'audio/mpeg', 'request-id': seededUuid(`elevenlabs:${x.raw}`), 'character-cost': String(cost(x.body)) };
  // A malformed answer (fault error_after_chunks): a 200 whose bytes are not audio (a cut-off JSON text).
  if (x.fault.error_after_chunks !== undefined) return sendBytes(raw.sink, {}, Buffer.from('{"detail": {"status": "simulated'), headers);
  await sendBytes(raw.sink, x.fault, silentMp3(seconds(x.body)), headers);
}

const VOICE_ID = /^[A-Za-z0-9]{20}$/;
const SPEECH_PATH = /^\/v1\/text-to-speech\/([^/]+)$/;

/** Matches the two ElevenLabs operations (the voice id is a path parameter); faults scope by `model_id`. */
export function matchElevenLabs(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST') return undefined;
  const speech = SPEECH_PATH.exec(url.pathname);
  if (!speech && url.pathname !== '/v1/sound-generation') return undefined;
  let model: unknown;
  try { model = (JSON.parse(raw.bytes.toString('utf8')) as Rec).model_id; } catch { model = undefined; }
  const faultKey = typeof model === 'string' ? model : speech ? 'eleven_multilingual_v2' : SFX_MODEL;
  const faultResponse = (status: number) => elevenlabsFaultResponse(status);
  if (speech) {
    const voice = decodeURIComponent(speech[1]!);
    const check = (body: Rec) => {
      if (!VOICE_ID.test(voice)) return { status: 404, detail: { status: 'voice_not_found', message: `A voice with voice_id '${voice}' does not exist.` } };
      const id = body.model_id ?? 'eleven_multilingual_v2';
      if (typeof id === 'string' && !(TTS_MODELS as readonly string[]).includes(id)) return { status: 400, detail: { status: 'model_not_found', message: `A model with model ID ${id} does not exist.` } };
      return speechProblems(body);
    };
    const length = (body: Rec) => [...String(body.text)].length;
    return { faultKey, route: { faultResponse, handle: (x) => answerAudio(x, raw, url, check, (b) => Math.max(0.5, length(b) / CHARS_PER_SECOND), length) } };
  }
  // Without duration_seconds the vendor guesses one; the simulator picks 5 s (the gateway always sends it).
  const seconds = (body: Rec) => (typeof body.duration_seconds === 'number' ? body.duration_seconds : 5);
  return { faultKey, route: { faultResponse, handle: (x) => answerAudio(x, raw, url, soundProblems, seconds, (b) => Math.ceil(seconds(b) * 40)) } };
}
