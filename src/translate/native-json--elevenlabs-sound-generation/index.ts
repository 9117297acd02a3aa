/**
 * The sound-effects request (spec 4.8) to ElevenLabs' `POST /v1/sound-generation`
 * (docs/vendors/elevenlabs.md section 2): `prompt` becomes `text`; `duration_seconds` (required by
 * the gateway: the vendor's automatic duration is unsupported), `loop` and `prompt_influence` as they
 * are; MP3 asked for in the output_format query. The MP3 goes back as is; the meter bills the requested
 * duration (routes/sound-effects.yaml).
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { elevenlabsError, MP3_OUTPUT_FORMAT, MP3_PLAN, mp3File, noStream } from '../elevenlabs.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** Creates the sound-effects translator for one request. */
export function createNativeJsonToElevenlabsSoundGeneration(_clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  return {
    request(body: Record<string, unknown>, offering: CompiledOffering) {
      return {
        text: body.prompt,
        model_id: offering.upstreamModel,
        duration_seconds: body.duration_seconds,
        ...(body.loop !== undefined ? { loop: body.loop } : {}),
        ...(body.prompt_influence !== undefined ? { prompt_influence: body.prompt_influence } : {}),
      };
    },
    query: () => ({ output_format: [MP3_OUTPUT_FORMAT] }),
    response: () => { throw new GatewayError('upstream_error', 'The upstream provider sent JSON where audio was expected.'); },
    file: (data) => mp3File(data),
    filePlan: () => MP3_PLAN,
    stream: noStream,
    error: elevenlabsError,
  };
}
