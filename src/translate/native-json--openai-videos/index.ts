/**
 * Video generation (spec 4.16) to OpenAI's videos API: `POST /videos` (createVideo, JSON body
 * CreateVideoJsonBody) for a generation, `POST /videos/{video_id}/remix` (CreateVideoRemixBody: the
 * prompt only) for a remix, and `GET /videos/{video_id}` (VideoResource) for the job's status.
 *
 * The client request was checked before this: `seconds` is 4, 8 or 12 (sent as the string the vendor's
 * VideoSeconds enum takes), `size` one the model allows (offering `params`), and `image`, when given,
 * is a data URL of verified PNG, JPEG or WebP bytes (the route's `url_inputs`/`file_inputs`): sent as
 * `input_reference.image_url`, so the vendor never fetches a client URL. Its pixel size must equal
 * `size` (spec 4.16: "Not auto-resized"), checked here from the image header, before any reservation.
 * A remix sends only the prompt: it inherits the source's size and duration.
 */
import { GatewayError } from '../../errors.js';
import { imageDimensions } from '../../files/verify/dimensions.js';
import type { JobStatus, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

const STATES = new Set(['queued', 'in_progress', 'completed', 'failed']);

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed video job (${what}).`);
}

/** Refuses a reference image whose pixel size is not the requested size. */
function checkImageSize(image: string, size: string): void {
  const bytes = Buffer.from(image.slice(image.indexOf(',') + 1), 'base64');
  const found = imageDimensions(bytes);
  if (!found) throw new GatewayError('invalid_request', 'image: the reference image header cannot be read.', { param: 'image' });
  if (`${found.width}x${found.height}` !== size) {
    throw new GatewayError('invalid_request', `image: the reference image is ${found.width}x${found.height}; it must be exactly ${size} (the requested size). Images are not resized.`, { param: 'image' });
  }
}

/** The job a VideoResource describes. */
export function videoJobStatus(upstream: Record<string, unknown>): JobStatus {
  const { id, status, progress, seconds, error } = upstream;
  if (typeof id !== 'string' || id === '') throw malformed('no id');
  if (typeof status !== 'string' || !STATES.has(status)) throw malformed(`status ${JSON.stringify(status)}`);
  const job: JobStatus = { vendorId: id, state: status as JobStatus['state'], progress: typeof progress === 'number' && progress >= 0 && progress <= 100 ? Math.floor(progress) : 0 };
  const reported = typeof seconds === 'string' || typeof seconds === 'number' ? Number(seconds) : NaN;
  if (Number.isFinite(reported) && reported > 0) job.seconds = reported;
  if (status === 'failed') {
    const e = (error && typeof error === 'object' ? error : {}) as Record<string, unknown>;
    job.error = { code: typeof e.code === 'string' ? e.code : 'video_generation_failed', message: typeof e.message === 'string' ? e.message : 'The video generation failed.' };
  }
  return job;
}

/** Creates the OpenAI-format video translator for one request (generation or remix). */
export function createNativeJsonToOpenaiVideos(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const remix = clientBody.remix_video_id !== undefined;
  if (!remix && typeof clientBody.image === 'string') checkImageSize(clientBody.image, String(clientBody.size));
  return {
    request(body, offering) {
      if (remix) return { prompt: body.prompt };
      const out: Record<string, unknown> = { model: offering.upstreamModel, prompt: body.prompt, seconds: String(body.seconds), size: body.size };
      if (typeof body.image === 'string') out.input_reference = { image_url: body.image };
      return out;
    },
    response(upstream) {
      const job = videoJobStatus(upstream);
      return { body: { vendor_id: job.vendorId, status: job.state }, usage: null, outputText: '', quantities: {} };
    },
    job: videoJobStatus,
    stream: () => { throw new GatewayError('invalid_request', 'Video generations do not stream.'); },
    error: mapUpstreamError,
  };
}
