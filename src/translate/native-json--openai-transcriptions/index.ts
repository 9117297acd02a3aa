/**
 * Speech to text (spec 4.8: transcription and translation to English) to an OpenAI-format
 * `POST /audio/transcriptions` or `/audio/translations`: a multipart FormData with the gateway's
 * model id swapped for the upstream's, the request's one `file` part (uploaded, or a temporary file
 * of purpose AUDIO_INPUT put there by `file_inputs`) and the standard audio parameters as text
 * fields (`timestamp_granularities[]` once per value).
 *
 * Answers, as the vendor gives them (AudioResponseFormat):
 *  - json and verbose_json: the vendor's JSON as is; its `usage`, when of type `tokens`, is what the
 *    token meter bills (usage.ts); a minute-billed model's answer is billed by the measured duration.
 *  - text, srt and vtt from a duration-billed model (whisper-1): the vendor's plain text body and its
 *    content type, passed on (`textResponse`).
 *  - text from a token-billed model (gpt-4o-transcribe family): those answer JSON only, and only JSON
 *    carries the usage, so the vendor is asked for json and the gateway writes its `text` as the
 *    vendor's text format would (the text and a newline, text/plain). srt, vtt and verbose_json need
 *    segments these models do not produce: their offerings refuse them (providers/openai.yaml).
 *  - `stream: true` (token models; whisper-1's offering refuses it): the vendor's SSE events as they
 *    come (stream.ts), billed from the usage of `transcript.text.done`.
 */
import { Blob } from 'node:buffer';
import { FormData } from 'undici';
import { GatewayError } from '../../errors.js';
import type { TranslatedAnswer, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';
import { transcriptionStream } from './stream.js';
import { malformed, transcriptionUsage } from './usage.js';

/** The plain-text answer formats (the vendor answers them with a text/plain body). */
export const TEXT_FORMATS = ['text', 'srt', 'vtt'] as const;

/** Text fields carried upstream (the route's schema admits no others): as sent, but a rendered text's response_format (json). */
const CARRIED = ['language', 'prompt', 'response_format', 'temperature'] as const;

/** The content type of the plain-text answers (the vendor's). */
const TEXT_PLAIN = 'text/plain; charset=utf-8';

const isTextFormat = (format: unknown): boolean => (TEXT_FORMATS as readonly unknown[]).includes(format);

/** Creates the OpenAI-format speech-to-text translator for one request. */
export function createNativeJsonToOpenaiTranscriptions(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const asked = clientBody.response_format ?? 'json';
  // Set once the offering is known (request): the gateway renders the text of a token model's JSON.
  let renders = false;
  return {
    request(body, offering, files = []) {
      const audio = files.find((f) => f.field === 'file');
      if (!audio) throw new GatewayError('invalid_request', "Missing required file part 'file'.", { param: 'file' });
      renders = offering.billing.unit === 'token' && asked === 'text';
      const form = new FormData();
      form.append('model', offering.upstreamModel);
      form.append('file', new Blob([audio.data], { type: audio.contentType || 'application/octet-stream' }), audio.filename || 'audio');
      for (const name of CARRIED) {
        const value = name === 'response_format' && renders ? 'json' : body[name];
        if (value !== undefined && value !== null) form.append(name, String(value));
      }
      const granularities = body.timestamp_granularities;
      for (const g of Array.isArray(granularities) ? granularities : granularities === undefined ? [] : [granularities]) form.append('timestamp_granularities[]', String(g));
      if (body.stream === true) form.append('stream', 'true');
      return form;
    },
    response(upstream): TranslatedAnswer {
      if (typeof upstream.text !== 'string') throw malformed('no text');
      const usage = transcriptionUsage(upstream.usage);
      if (isTextFormat(asked) && !renders) throw malformed(`JSON where ${String(asked)} was asked for`);
      const text = renders ? { contentType: TEXT_PLAIN, data: `${upstream.text}\n` } : undefined;
      return { body: upstream, usage, outputText: upstream.text, quantities: {}, ...(text ? { text } : {}) };
    },
    textResponse(upstreamText, _model, headers): TranslatedAnswer {
      if (!isTextFormat(asked) || renders) throw malformed(`plain text where ${String(asked)} was asked for`);
      const contentType = headers['content-type'] ?? TEXT_PLAIN;
      return { body: { text: upstreamText }, usage: null, outputText: upstreamText, quantities: {}, text: { contentType, data: upstreamText } };
    },
    stream: () => transcriptionStream(),
    error: mapUpstreamError,
  };
}
