/**
 * The speech request (spec 4.8, OpenAI's `POST /v1/audio/speech` shape) to OpenAI's createSpeech.
 * The route's policies have checked the voice and the format (mp3 by default), the model's have
 * refused what it does not take (`instructions` on tts-1 and tts-1-hd), so the body goes as the
 * client sent it, with the upstream's model id.
 *
 * Billing (providers/openai.yaml): tts-1 and tts-1-hd per character, known before the call, so the
 * audio streams through (`filePlan`). gpt-4o-mini-tts is billed by tokens, and the vendor reports them
 * only in the `speech.audio.done` event of `stream_format: sse` (its plain audio answer has no usage):
 * the gateway asks for SSE, joins the audio deltas into the file the client asked for, and bills the
 * event's usage exactly (sse-audio.ts). Which answer came is read from its content type.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { noStream } from '../elevenlabs.js';
import type { FilePlan, TranslatedFile, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';
import { checkSpeechHead, speechFormat } from './formats.js';
import { readSpeechSse } from './sse-audio.js';

/** createSpeech's fields the gateway carries (the route's schema admits no others besides voice settings, refused upstream of here). */
const CARRIED = ['input', 'voice', 'response_format', 'speed', 'instructions'] as const;

/** True when the offering is billed by the vendor's reported tokens: those come only with SSE. */
const tokenBilled = (offering: CompiledOffering): boolean => offering.billing.unit === 'token';

const isEventStream = (headers: Readonly<Record<string, string>>): boolean => /^text\/event-stream\b/i.test(headers['content-type'] ?? '');

/** Creates the OpenAI speech translator for one request. */
export function createNativeJsonToOpenaiSpeech(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const format = speechFormat(clientBody.response_format);
  const plan: FilePlan = {
    contentType: format.contentType, filename: null, headBytes: format.headBytes, tailBytes: 0,
    checkHead: (head) => checkSpeechHead(format, head),
  };
  let sse = false;
  return {
    request(body, offering) {
      sse = tokenBilled(offering);
      const out: Record<string, unknown> = { model: offering.upstreamModel };
      for (const name of CARRIED) if (body[name] !== undefined && body[name] !== null) out[name] = body[name];
      return sse ? { ...out, stream_format: 'sse' } : out;
    },
    response: () => { throw new GatewayError('upstream_error', 'The upstream provider sent JSON where audio was expected.'); },
    file(data, headers): TranslatedFile {
      if (!isEventStream(headers)) {
        // A token-billed answer without its usage cannot be billed exactly: the upstream's fault.
        if (sse) throw new GatewayError('upstream_error', 'The upstream provider sent audio without the usage it bills.');
        checkSpeechHead(format, data.subarray(0, format.headBytes));
        return { data, contentType: format.contentType, filename: null };
      }
      const { audio, usage } = readSpeechSse(data.toString('utf8'));
      checkSpeechHead(format, audio.subarray(0, format.headBytes));
      return { data: audio, contentType: format.contentType, filename: null, usage };
    },
    filePlan(headers) {
      // Only a plain audio answer streams through; SSE is read whole (file above).
      if (isEventStream(headers)) throw new GatewayError('upstream_error', 'The upstream provider sent an event stream where audio was expected.');
      return plan;
    },
    stream: noStream,
    error: mapUpstreamError,
  };
}
