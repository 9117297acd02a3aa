/**
 * The speech request (spec 4.8, OpenAI's `POST /v1/audio/speech` shape) to ElevenLabs'
 * `POST /v1/text-to-speech/{voice_id}` (docs/vendors/elevenlabs.md section 1). By the time it gets
 * here the route's policies have turned `voice` into the vendor's voice id (the path parameter) and
 * `response_format` into an output_format, and the model's own policies have refused the voice
 * settings its family does not take (spec 4.8 table, providers/elevenlabs.yaml). Settings go in
 * `voice_settings`, only those the client sent: none keeps the voice's saved behaviour.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { elevenlabsError, MP3_OUTPUT_FORMAT, MP3_PLAN, mp3File, noStream } from '../elevenlabs.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** The voice settings of spec 4.8, as ElevenLabs names them in `voice_settings`. */
export const VOICE_SETTINGS = ['stability', 'similarity_boost', 'style', 'speed', 'use_speaker_boost'] as const;

/** Spec 4.8: `speed` 0.7 to 1.2 on these models (the route's schema takes OpenAI's wider 0.25 to 4). */
export const SPEED_RANGE = { min: 0.7, max: 1.2 } as const;

/**
 * Creates the speech translator for one request; voice instructions and a speed outside spec 4.8's
 * range are refused here, before anything is reserved.
 */
export function createNativeJsonToElevenlabsTts(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  if (clientBody.instructions !== undefined && clientBody.instructions !== null) {
    throw new GatewayError('unsupported_parameter', 'Voice instructions are not supported.', { param: 'instructions' });
  }
  const speed = clientBody.speed;
  if (typeof speed === 'number' && (speed < SPEED_RANGE.min || speed > SPEED_RANGE.max)) {
    throw new GatewayError('unsupported_parameter', `speed must be between ${SPEED_RANGE.min} and ${SPEED_RANGE.max} on this model.`, { param: 'speed' });
  }
  return {
    request(body: Record<string, unknown>, offering: CompiledOffering) {
      const settings = Object.fromEntries(VOICE_SETTINGS.filter((name) => body[name] !== undefined && body[name] !== null).map((name) => [name, body[name]]));
      return {
        text: body.input,
        model_id: offering.upstreamModel,
        ...(Object.keys(settings).length ? { voice_settings: settings } : {}),
      };
    },
    query: (body) => ({ output_format: [typeof body.response_format === 'string' ? body.response_format : MP3_OUTPUT_FORMAT] }),
    response: () => { throw new GatewayError('upstream_error', 'The upstream provider sent JSON where audio was expected.'); },
    file: (data) => mp3File(data),
    filePlan: () => MP3_PLAN,
    stream: noStream,
    error: elevenlabsError,
  };
}
