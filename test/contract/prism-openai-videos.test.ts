/**
 * Contract (issue 11; spec 4.16): the gateway's outgoing video requests against OpenAI's published
 * spec. A Prism mock plays OpenAI behind a gateway holding a made-up key, and every request the
 * gateway sends (native-json--openai-videos, the poller src/videos/poller.ts) must reach the
 * vendor's method and path with `Authorization: Bearer <key>` and pass Prism's validation with no
 * violation: createVideo (POST /videos, JSON CreateVideoJsonBody, with and without the reference image
 * as `input_reference.image_url`), GetVideo (GET /videos/{video_id}, the poller's status read),
 * RetrieveVideoContent (GET /videos/{video_id}/content) and CreateVideoRemix (POST
 * /videos/{video_id}/remix, the prompt only). A negative control shows the validation is live.
 *
 * Prism answers from the schema (static mode): a job `{"id":"string","status":"queued",...}`. On the
 * published spec a job therefore never completes, so the poller only reads its status. The download
 * and the remix (which needs a completed source job) are checked against a second mock playing a copy
 * of the spec that differs only on the answer side: GetVideo's answer carries an example, a completed
 * VideoResource, so the job completes on its first poll. The request schemas are untouched. Nothing is asserted about
 * billing or the stored video: the mock's answers are placeholders.
 *
 * The poller runs only on demand (POST /admin/jobs/video-jobs/run). Its cron schedule is moved to once
 * a year so that a background run can't poll first, and a manual clock makes the jobs due.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { callJson, gatewayRequestAsLogged, logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismLoggedRequest, type PrismProcess } from '../helpers/prism.js';

const OPENAI_SPEC = resolve(projectRoot(), '../shared/specs/openai/openapi.prism.json');
const KEY = 'openai-test-not-real';
const ROUTE = '/v1/videos/generations';

/** A copy of the spec whose GetVideo answers a completed job (an example on the answer side only); its path. */
function specAnsweringCompleted(dir: string): string {
  const doc = JSON.parse(readFileSync(OPENAI_SPEC, 'utf8')) as { paths: Record<string, any> };
  doc.paths['/videos/{video_id}'].get.responses['200'].content['application/json'].example = {
    id: 'video_123', object: 'video', model: 'sora-2', status: 'completed', progress: 100, created_at: 1712697600, completed_at: 1712697660,
    expires_at: 1712784060, prompt: 'A calico cat playing a piano on stage', size: '1280x720', seconds: '4', remixed_from_video_id: null, error: null,
  };
  const file = join(dir, 'openai-completed.prism.json');
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

/** A gateway whose openai provider is `mock`, on a manual clock. */
interface Side { mock: PrismProcess; t: TestGateway; clock: ManualClock; key: string; vendorId: string }

/** A logged request is on `method path` with the test key and no violation. */
function expectClean(logged: PrismLoggedRequest | undefined, method: string, path: string, detail: string): void {
  expect(`${logged?.method} ${logged?.path}`, detail).toBe(`${method} ${path}`);
  expect(logged!.violations, detail).toEqual([]);
  expect(logged!.passed, detail).toBe(true);
  expect(logged!.terminated, detail).toBeNull();
  expect(logged!.headers.authorization, detail).toBe(`Bearer ${KEY}`);
}

describe.runIf(storeKind === 'pglite')('Prism OpenAI videos contract: the requests of a video job validate against the spec', () => {
  let tmp: string;
  let config: ConfigCopy;
  let published: Side;
  let completed: Side;

  async function side(spec: string): Promise<Side> {
    const mock = await startPrismMock(spec);
    const clock = new ManualClock();
    const t = await startTestGateway({ configFile: config.configFile, clock, env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: mock.url } });
    // The vendor id of every job is whatever Prism answers for a createVideo (the schema's placeholder).
    const answer = await callJson(mock.url, '/videos', { key: KEY, body: { prompt: 'x' } });
    return { mock, t, clock, key: (await t.account('5')).key, vendorId: answer.json.id };
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'gw-prism-videos-'));
    config = await copyConfig();
    await config.editYaml('gateway.config.yaml', (doc) => { doc.video_jobs = { ...doc.video_jobs, poll_schedule: '0 0 0 1 1 *' }; });
    [published, completed] = await Promise.all([side(OPENAI_SPEC), side(specAnsweringCompleted(tmp))]);
  }, 180_000);
  afterAll(async () => {
    for (const s of [published, completed]) { await s?.t.dispose(); await stopChild(s?.mock.child); }
    for (const dir of [tmp, config?.dir]) if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Starts a job through the gateway; the client's view of it (its video_gw_ id). */
  async function create(s: Side, body: Record<string, unknown>) {
    const res = await fetch(`${s.t.url}${ROUTE}`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return JSON.parse(text) as { id: string; status: string };
  }

  /**
   * Makes every job due, runs the poller once, and returns its report and the requests Prism logged for
   * it: one status read per job polled, and a download per job completed or refused (`downloads`).
   */
  async function poll(s: Side, downloads = 0) {
    s.clock.advance(10_000);
    const mark = logMark(s.mock);
    const res = await fetch(`${s.t.url}/admin/jobs/video-jobs/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const run = await res.json() as { ran: boolean; result: { polled: number; completed: number; failed: number; errors: number } };
    expect([res.status, run.ran], JSON.stringify(run)).toEqual([200, true]);
    const logged = await loggedRequestsSince(s.mock, mark, run.result.polled + Math.max(downloads, run.result.completed));
    const detail = `${JSON.stringify(run)}\nprism:\n${logged.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    return { report: run.result, logged, detail };
  }

  /** The client's view of a job. */
  async function read(s: Side, id: string) {
    const res = await fetch(`${s.t.url}${ROUTE}/${id}`, { headers: { authorization: `Bearer ${s.key}` } });
    return await res.json() as { status: string };
  }

  it('createVideo: POST /videos with the model, prompt, seconds (the spec\'s string) and size', async () => {
    const body = { model: 'sora-2', prompt: 'A red kite over the sea.', seconds: 8, size: '1280x720' };
    const { logged, status } = await gatewayRequestAsLogged(published.t.url, published.key, published.mock, ROUTE, body, '/videos');
    expectClean(logged, 'POST', '/videos', logged.lines.join('\n'));
    expect(status).toBe(200);
    expect(logged.headers['content-type']).toMatch(/^application\/json/);
    expect(logged.body).toEqual({ model: 'sora-2', prompt: 'A red kite over the sea.', seconds: '8', size: '1280x720' });
  });

  it('createVideo with a reference image: the data URL goes out as input_reference.image_url', async () => {
    const image = `data:image/png;base64,${png(1280, 720, 7).toString('base64')}`;
    const body = { model: 'sora-2', prompt: 'The kite lands.', seconds: 4, size: '1280x720', image };
    const { logged, status } = await gatewayRequestAsLogged(published.t.url, published.key, published.mock, ROUTE, body, '/videos');
    expectClean(logged, 'POST', '/videos', logged.lines.join('\n').slice(0, 4000));
    expect(status).toBe(200);
    expect(logged.body).toEqual({ model: 'sora-2', prompt: 'The kite lands.', seconds: '4', size: '1280x720', input_reference: { image_url: image } });
  });

  // On the published spec the job stays `queued` (Prism's answer), so the poller reads its status and
  // downloads nothing: no RetrieveVideoContent request is sent and none is asserted here.
  it('GetVideo: the poller reads a queued job with GET /videos/{video_id} and downloads nothing', async () => {
    const job = await create(published, { model: 'sora-2', prompt: 'A boat.', seconds: 4 });
    const { report, logged, detail } = await poll(published);
    expect(report.polled, detail).toBeGreaterThanOrEqual(1);
    expect([report.completed, report.failed, report.errors], detail).toEqual([0, 0, 0]);
    expect(logged, detail).toHaveLength(report.polled);
    for (const l of logged) expectClean(l, 'GET', `/videos/${published.vendorId}`, detail);
    expect((await read(published, job.id)).status).toBe('queued');
  });

  // Prism's content answer is the schema's placeholder, not an MP4: the poller refuses to keep or bill
  // it (spec 4.16), so the job stays due; both requests it sent are what this contract checks.
  it('GetVideo then RetrieveVideoContent: a completed job is read, then its video downloaded', async () => {
    const job = await create(completed, { model: 'sora-2', prompt: 'A lighthouse.', seconds: 4, size: '720x1280' });
    const { report, logged, detail } = await poll(completed, 1);
    expect([report.polled, report.completed, report.failed, report.errors], detail).toEqual([1, 0, 0, 1]);
    expect(logged, detail).toHaveLength(2);
    expectClean(logged[0], 'GET', `/videos/${completed.vendorId}`, detail);
    expectClean(logged[1], 'GET', `/videos/${completed.vendorId}/content`, detail);
    expect((await read(completed, job.id)).status).not.toBe('completed');
    await completed.t.gw.db.query("UPDATE video_jobs SET state = 'failed' WHERE id = $1", [job.id]);
  });

  it('CreateVideoRemix: POST /videos/{the source\'s vendor id}/remix with the prompt only', async () => {
    const source = await create(completed, { model: 'sora-2', prompt: 'A boat.', seconds: 4 });
    // Completed as the poller leaves a job (Prism's content is no MP4 to download: see above).
    await completed.t.gw.db.query("UPDATE video_jobs SET state = 'completed', progress = 100, billed_seconds = 4, finished_at = now() WHERE id = $1", [source.id]);
    expect((await read(completed, source.id)).status).toBe('completed');
    const body = { model: 'sora-2', prompt: 'The same boat at night.', remix_video_id: source.id };
    const path = `/videos/${completed.vendorId}/remix`;
    const { logged, status } = await gatewayRequestAsLogged(completed.t.url, completed.key, completed.mock, ROUTE, body, path);
    expectClean(logged, 'POST', path, logged.lines.join('\n'));
    expect(status).toBe(200);
    expect(logged.headers['content-type']).toMatch(/^application\/json/);
    expect(logged.body).toEqual({ prompt: 'The same boat at night.' });
  });

  it('negative control: seconds outside the spec\'s enum, sent straight to the mock, gets a violation', async () => {
    const mark = logMark(published.mock);
    const res = await callJson(published.mock.url, '/videos', { key: KEY, body: { model: 'sora-2', prompt: 'x', seconds: '5', size: '1280x720' } });
    const [logged] = await loggedRequestsSince(published.mock, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.passed).toBe(false);
    expect(logged!.violations.join('\n')).toMatch(/seconds/);
  });
});
