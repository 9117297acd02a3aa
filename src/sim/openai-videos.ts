/**
 * OpenAI's videos API in the simulator (spec 4.16; vendor spec createVideo, CreateVideoRemix,
 * GetVideo, RetrieveVideoContent). Stateless, so a job survives a restart of the process that runs
 * it (the kill -9 test): the job's facts are encoded in its id (`video_sim_<base64url JSON>`: when it
 * was created, its seconds, size, model and scripted outcome). A job is `queued`, then `in_progress`,
 * then `completed` SIM_VIDEO_READY_MS after its creation; its content is an MP4 of its seconds.
 *
 * Scripted outcomes, chosen by a marker in the prompt (a simulator convention, never sent by clients
 * of a real vendor): `[sim:fail]` ends the job `failed`; `[sim:short]` produces 1.5 s less video than
 * asked (a 8 s job measures 6.5 s); `[sim:slow]` never finishes. OpenAI-shaped 400s for what the
 * vendor spec refuses (unknown model, seconds or size; a remix of a job that is not completed).
 */
import type { SimMatch } from './azure-content-safety.js';
import type { RawRequest } from './anthropic-files.js';
import { sendBytes } from './anthropic-files.js';
import { sendJsonAnswer } from './native.js';
import { simMp4 } from './mp4.js';
import { openaiError, openaiFaultResponse, unparsableJson } from './openai-route.js';
import { isRecord, type Rec } from './text.js';

/** A job is completed this long after it was created. */
export const SIM_VIDEO_READY_MS = 1_500;
const MODELS = new Set(['sora-2', 'sora-2-pro']);
const SECONDS = new Set(['4', '8', '12']);
const SIZES = new Set(['720x1280', '1280x720', '1024x1792', '1792x1024']);

/** What a simulated job id carries. */
interface SimJob { c: number; s: string; z: string; m: string; o: 'ok' | 'fail' | 'short' | 'slow'; r?: string }

const encode = (job: SimJob): string => `video_sim_${Buffer.from(JSON.stringify(job)).toString('base64url')}`;

function decode(id: string): SimJob | null {
  if (!id.startsWith('video_sim_')) return null;
  try {
    const job = JSON.parse(Buffer.from(id.slice(10), 'base64url').toString('utf8')) as SimJob;
    return typeof job.c === 'number' && SECONDS.has(job.s) ? job : null;
  } catch { return null; }
}

function outcomeOf(prompt: string): SimJob['o'] {
  if (prompt.includes('[sim:fail]')) return 'fail';
  if (prompt.includes('[sim:short]')) return 'short';
  return prompt.includes('[sim:slow]') ? 'slow' : 'ok';
}

/** The VideoResource of a job now. */
function resource(id: string, job: SimJob): Rec {
  const elapsed = Date.now() - job.c;
  const done = job.o !== 'slow' && elapsed >= SIM_VIDEO_READY_MS;
  const status = done ? (job.o === 'fail' ? 'failed' : 'completed') : elapsed < SIM_VIDEO_READY_MS / 3 ? 'queued' : 'in_progress';
  return {
    id, object: 'video', model: job.m, status, progress: done ? 100 : Math.min(99, Math.floor((elapsed / SIM_VIDEO_READY_MS) * 100)),
    created_at: Math.floor(job.c / 1000), completed_at: done ? Math.floor((job.c + SIM_VIDEO_READY_MS) / 1000) : null,
    expires_at: null, prompt: null, size: job.z, seconds: job.s, remixed_from_video_id: job.r ?? null,
    error: status === 'failed' ? { code: 'video_generation_failed', message: 'The simulated video generation failed.' } : null,
  };
}

const bad = (message: string, param: string | null = null): Rec => openaiError(message, 'invalid_request_error', param);

/** POST /v1/videos: validates CreateVideoJsonBody and answers the queued job. */
function create(body: Rec): { status: number; body: Rec } {
  if (typeof body.model !== 'string' || !MODELS.has(body.model)) return { status: 400, body: bad(`Invalid model: ${String(body.model)}.`, 'model') };
  if (typeof body.prompt !== 'string' || body.prompt === '') return { status: 400, body: bad('prompt is required.', 'prompt') };
  const seconds = body.seconds ?? '4';
  if (typeof seconds !== 'string' || !SECONDS.has(seconds)) return { status: 400, body: bad('seconds must be "4", "8" or "12".', 'seconds') };
  const size = body.size ?? '720x1280';
  if (typeof size !== 'string' || !SIZES.has(size)) return { status: 400, body: bad(`Invalid size: ${String(size)}.`, 'size') };
  const ref = body.input_reference;
  if (ref !== undefined && (!isRecord(ref) || typeof ref.image_url !== 'string' || !ref.image_url.startsWith('data:image/'))) {
    return { status: 400, body: bad('input_reference.image_url must be an image data URL here.', 'input_reference') };
  }
  const job: SimJob = { c: Date.now(), s: seconds, z: size, m: body.model, o: outcomeOf(body.prompt) };
  const id = encode(job);
  return { status: 200, body: resource(id, job) };
}

/** POST /v1/videos/{id}/remix: a new job inheriting the source's size and seconds. */
function remix(sourceId: string, body: Rec): { status: number; body: Rec } {
  const source = decode(sourceId);
  if (!source) return { status: 404, body: openaiError(`Video ${sourceId} not found.`, 'invalid_request_error', null, 'not_found') };
  if (resource(sourceId, source).status !== 'completed') return { status: 400, body: bad('Only a completed video can be remixed.', 'video_id') };
  if (typeof body.prompt !== 'string' || body.prompt === '') return { status: 400, body: bad('prompt is required.', 'prompt') };
  const job: SimJob = { c: Date.now(), s: source.s, z: source.z, m: source.m, o: outcomeOf(body.prompt), r: sourceId };
  const id = encode(job);
  return { status: 200, body: resource(id, job) };
}

/** The produced seconds of a finished job (its scripted outcome decides). */
const producedSeconds = (job: SimJob): number => Number(job.s) - (job.o === 'short' ? 1.5 : 0);

/** Matches the videos API: create, remix, status and content. */
export function matchOpenaiVideos(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  const path = url.pathname;
  const route = (handle: SimMatch['route']['handle']): SimMatch => ({ faultKey: 'openai-videos', route: { faultResponse: openaiFaultResponse, handle } });
  if (method === 'POST' && path === '/v1/videos') {
    return route(async (x) => {
      if (!x.parsed || !isRecord(x.body)) return x.sendJson(400, unparsableJson());
      const answer = create(x.body);
      return answer.status === 200 ? sendJsonAnswer(x, answer.body) : x.sendJson(answer.status, answer.body);
    });
  }
  const m = /^\/v1\/videos\/([A-Za-z0-9_-]+)(\/remix|\/content)?$/.exec(path);
  if (!m) return undefined;
  const [, id, tail] = m as unknown as [string, string, string | undefined];
  const job = decode(id);
  if (method === 'POST' && tail === '/remix') {
    return route(async (x) => {
      if (!x.parsed || !isRecord(x.body)) return x.sendJson(400, unparsableJson());
      const answer = remix(id, x.body);
      return answer.status === 200 ? sendJsonAnswer(x, answer.body) : x.sendJson(answer.status, answer.body);
    });
  }
  if (method !== 'GET' || tail === '/remix') return undefined;
  return route(async (x) => {
    if (!job) return x.sendJson(404, openaiError(`Video ${id} not found.`, 'invalid_request_error', null, 'not_found'));
    const now = resource(id, job);
    if (tail !== '/content') return sendJsonAnswer(x, now);
    if (now.status !== 'completed') return x.sendJson(400, bad('The video is not ready yet.', 'video_id'));
    return sendBytes(raw.sink, x.fault, simMp4(producedSeconds(job)), { 'content-type': 'video/mp4' });
  });
}
