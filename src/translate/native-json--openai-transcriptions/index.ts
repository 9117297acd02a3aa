/**
 * Speech to text (spec 4.8: transcription and translation to English) to an OpenAI-format
 * `POST /audio/transcriptions` or `/audio/translations`: a multipart FormData with the gateway's
 * model id swapped for the upstream's, the request's one `file` part (uploaded, or a temporary file
 * of purpose AUDIO_INPUT put there by `file_inputs`) and the standard audio parameters as text
 * fields (`timestamp_granularities[]` once per value). Only JSON answers are served
 * (`response_format` json or verbose_json): text, srt and vtt come back as text/plain, which this
 * JSON route does not carry, so they are refused before anything is reserved, naming the supported
 * ones. Streaming is refused likewise. The answer is the vendor's JSON as is; its `usage`, when of
 * type `tokens` (CreateTranscriptionResponseJson, TranscriptTextUsageTokens), is the token usage the
 * token meter bills (input tokens, audio and text alike, at the input price; output at the output
 * price); a minute-billed model's answer reports none (its meter reads the measured duration).
 */
import { Blob } from 'node:buffer';
import { FormData } from 'undici';
import { GatewayError } from '../../errors.js';
import type { TokenUsage, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** The answer formats this route serves (JSON ones); the others are refused with this list. */
export const SUPPORTED_RESPONSE_FORMATS = ['json', 'verbose_json'] as const;

/** Text fields carried upstream as sent (the route's schema admits no others). */
const CARRIED = ['language', 'prompt', 'response_format', 'temperature'] as const;

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed transcription answer (${what}).`);
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The token usage of a `usage: {type: tokens}` object; null for duration usage or none. */
export function transcriptionUsage(usage: unknown): TokenUsage | null {
  if (!usage || typeof usage !== 'object' || (usage as { type?: unknown }).type !== 'tokens') return null;
  const { input_tokens: input, output_tokens: output } = usage as Record<string, unknown>;
  if (!count(input) || !count(output)) throw malformed('usage');
  return { input, output, cachedInput: 0, cacheWrite: 0, reasoning: 0 };
}

/** Refuses, before anything is reserved, what this JSON route cannot carry. */
function checkRequest(body: Record<string, unknown>): void {
  const format = body.response_format;
  if (format !== undefined && format !== null && !(SUPPORTED_RESPONSE_FORMATS as readonly unknown[]).includes(format)) {
    throw new GatewayError('unsupported_parameter', `response_format "${String(format)}" answers with plain text, which this endpoint does not serve; supported: ${SUPPORTED_RESPONSE_FORMATS.join(', ')}.`, { param: 'response_format' });
  }
  if (body.stream === true) throw new GatewayError('unsupported_parameter', 'Streamed transcriptions are not supported; omit stream or set it to false.', { param: 'stream' });
}

/** Creates the OpenAI-format speech-to-text translator for one request. */
export function createNativeJsonToOpenaiTranscriptions(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  checkRequest(clientBody);
  return {
    request(body, offering, files = []) {
      const audio = files.find((f) => f.field === 'file');
      if (!audio) throw new GatewayError('invalid_request', "Missing required file part 'file'.", { param: 'file' });
      const form = new FormData();
      form.append('model', offering.upstreamModel);
      form.append('file', new Blob([audio.data], { type: audio.contentType || 'application/octet-stream' }), audio.filename || 'audio');
      for (const name of CARRIED) if (body[name] !== undefined && body[name] !== null) form.append(name, String(body[name]));
      const granularities = body.timestamp_granularities;
      for (const g of Array.isArray(granularities) ? granularities : granularities === undefined ? [] : [granularities]) form.append('timestamp_granularities[]', String(g));
      return form;
    },
    response(upstream) {
      if (typeof upstream.text !== 'string') throw malformed('no text');
      const usage = transcriptionUsage(upstream.usage);
      return { body: upstream, usage, outputText: upstream.text, quantities: {} };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Transcriptions do not stream.'); },
    error: mapUpstreamError,
  };
}
