/**
 * Black Forest Labs' FLUX.2 [flex] in the simulator (../shared/specs/bfl/bfl-flux2flex+get_result.openapi.yaml):
 *
 * - `POST /v1/flux-2-flex` `{prompt, width, height, output_format, ...}` answers 200 `{id, polling_url,
 *   cost, input_mp, output_mp}`; a body the vendor schema refuses is a FastAPI 422 `{detail: [{loc, msg, type}]}`
 *   (unknown fields are refused too, so a gateway bug shows).
 * - `GET /v1/get_result?id=<id>` answers `Pending` on the first poll (`POLLS_UNTIL_READY`), then
 *   `Ready` with `result.sample`, a URL on this simulator (the vendor's delivery host):
 * - `GET /v1/sim-bfl/<id>.<png|jpeg>` serves a real image of the requested size and format
 *   (gray-images.ts), with no credential needed, like the vendor's signed delivery URLs.
 *
 * Deterministic outcomes, by a marker in the prompt: `sim:error` ends the job `Error`,
 * `sim:request-moderated` / `sim:content-moderated` end it moderated, `sim:pending` never ends it,
 * `sim:size=WxH` returns an image of another size than asked, `sim:poll-url=<url>` and
 * `sim:sample-url=<url>` name another polling or download URL (to test the gateway's host rule).
 * An unknown id is `Task not found`. Faults scope by the names `bfl` (submit), `bfl-result` (polls)
 * and `bfl-delivery` (the image).
 */
import type { RawRequest } from './anthropic-files.js';
import { sendBytes } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange, SimRoute } from './exchange.js';
import { grayJpeg, grayPng } from './gray-images.js';
import { seededUuid, sendJsonAnswer } from './native.js';
import { isRecord, type Rec } from './text.js';

export const BFL_SUBMIT_PATH = '/v1/flux-2-flex';
export const BFL_RESULT_PATH = '/v1/get_result';
export const BFL_DELIVERY_PATH = '/v1/sim-bfl/';
/** The poll that first answers Ready (earlier polls answer Pending). */
export const POLLS_UNTIL_READY = 2;
const MAX_JOBS = 1000;
const FIELDS = ['prompt', 'prompt_upsampling', 'seed', 'width', 'height', 'guidance', 'steps', 'safety_tolerance', 'output_format', 'webhook_url', 'webhook_secret',
  'input_image', ...[2, 3, 4, 5, 6, 7, 8].map((i) => `input_image_${i}`), 'input_image_blob_path'];

interface Job { width: number; height: number; format: 'png' | 'jpeg'; polls: number; outcome: string; sampleUrl: string | null }

type Detail = { loc: Array<string | number>; msg: string; type: string };
const detail = (field: string, msg: string, type = 'value_error'): Detail => ({ loc: ['body', field], msg, type });

/** The 422 details of a submit body (the vendor schema's rules: prompt required, sides at least 64, formats, ranges). */
export function validateFlex(body: unknown): Detail[] {
  if (!isRecord(body)) return [{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }];
  const out: Detail[] = [];
  for (const key of Object.keys(body)) if (!FIELDS.includes(key)) out.push(detail(key, 'Extra inputs are not permitted', 'extra_forbidden'));
  if (typeof body.prompt !== 'string') out.push(detail('prompt', 'Field required', 'missing'));
  for (const side of ['width', 'height'] as const) {
    const v = body[side];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v) || v < 64 || v % 16 !== 0 || v > 2048)) out.push(detail(side, 'Input should be a multiple of 16 from 64 to 2048'));
  }
  const format = body.output_format;
  if (format !== undefined && format !== null && format !== 'png' && format !== 'jpeg') out.push(detail('output_format', "Input should be 'jpeg' or 'png'", 'enum'));
  const tolerance = body.safety_tolerance;
  if (tolerance !== undefined && (typeof tolerance !== 'number' || !Number.isInteger(tolerance) || tolerance < 0 || tolerance > 5)) out.push(detail('safety_tolerance', 'Input should be from 0 to 5'));
  return out;
}

/** The job's end by the prompt's marker; `Ready` without one. */
function outcomeOf(prompt: string): string {
  if (prompt.includes('sim:error')) return 'Error';
  if (prompt.includes('sim:request-moderated')) return 'Request Moderated';
  if (prompt.includes('sim:content-moderated')) return 'Content Moderated';
  if (prompt.includes('sim:pending')) return 'Pending';
  return 'Ready';
}

/** `sim:<name>=<value>` in the prompt (value up to the next space), if present. */
const marker = (prompt: string, name: string): string | null => new RegExp(`sim:${name}=(\\S+)`).exec(prompt)?.[1] ?? null;

/** The image a job delivers. */
export function jobImage(job: { width: number; height: number; format: 'png' | 'jpeg' }): Buffer {
  return job.format === 'png' ? grayPng(job.width, job.height) : grayJpeg(job.width, job.height);
}

const bflFaultResponse = (status: number): { body: unknown; headers: Record<string, string> } => ({ body: { detail: `Simulated fault (HTTP ${status}).` }, headers: {} });

/** The BFL routes over one in-memory job table. */
export function createBflRoutes(): { match(method: string, url: URL, raw: RawRequest): SimMatch | undefined; reset(): void } {
  const jobs = new Map<string, Job>();
  let sequence = 0;

  const submit = async (x: Exchange) => {
    if (!x.parsed) return x.sendJson(422, { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    const problems = validateFlex(x.body);
    if (problems.length > 0) return x.sendJson(422, { detail: problems });
    const body = x.body as Rec;
    const prompt = body.prompt as string;
    const forced = /^(\d+)x(\d+)$/.exec(marker(prompt, 'size') ?? '');
    const width = forced ? Number(forced[1]) : typeof body.width === 'number' ? body.width : 1024;
    const height = forced ? Number(forced[2]) : typeof body.height === 'number' ? body.height : 1024;
    sequence += 1;
    const id = seededUuid(`bfl:${sequence}:${x.raw}`);
    if (jobs.size >= MAX_JOBS) jobs.delete(jobs.keys().next().value!);
    jobs.set(id, { width, height, format: body.output_format === 'png' ? 'png' : 'jpeg', polls: 0, outcome: outcomeOf(prompt), sampleUrl: marker(prompt, 'sample-url') });
    const origin = `http://${x.headers.host ?? '127.0.0.1'}`;
    const megapixels = Math.round((width * height) / 10_000) / 100;
    await sendJsonAnswer(x, { id, polling_url: marker(prompt, 'poll-url') ?? `${origin}${BFL_RESULT_PATH}?id=${id}`, cost: megapixels * 6, input_mp: 0, output_mp: megapixels });
  };

  const result = async (x: Exchange, id: string) => {
    const job = jobs.get(id);
    if (!job) return sendJsonAnswer(x, { id, status: 'Task not found', result: null });
    job.polls += 1;
    const status = job.polls < POLLS_UNTIL_READY ? 'Pending' : job.outcome;
    const origin = `http://${x.headers.host ?? '127.0.0.1'}`;
    const sample = job.sampleUrl ?? `${origin}${BFL_DELIVERY_PATH}${id}.${job.format}`;
    const done = status === 'Ready' ? { sample, prompt: '', seed: 0, start_time: 0, end_time: 1, duration: 1 } : null;
    await sendJsonAnswer(x, { id, status, result: done, progress: status === 'Pending' ? 0.5 : null, details: null, preview: null });
  };

  const route = (handle: (x: Exchange) => Promise<void>): SimRoute => ({ faultResponse: bflFaultResponse, handle });

  return {
    match(method, url, raw) {
      if (method === 'POST' && url.pathname === BFL_SUBMIT_PATH) return { faultKey: 'bfl', route: route(submit) };
      if (method === 'GET' && url.pathname === BFL_RESULT_PATH) return { faultKey: 'bfl-result', route: route((x) => result(x, url.searchParams.get('id') ?? '')) };
      const image = method === 'GET' ? /^\/v1\/sim-bfl\/([0-9a-f-]{36})\.(png|jpeg)$/.exec(url.pathname) : null;
      if (!image) return undefined;
      return {
        faultKey: 'bfl-delivery',
        route: route(async (x) => {
          const job = jobs.get(image[1]!);
          if (!job || job.format !== image[2]) return x.sendJson(404, { detail: 'Not found' });
          await sendBytes(raw.sink, x.fault, jobImage(job), { 'content-type': `image/${job.format}` });
        }),
      };
    },
    reset() { jobs.clear(); sequence = 0; },
  };
}
