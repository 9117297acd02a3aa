/**
 * The conformance suite (issue 9 point 6; DESIGN.md "one conformance suite that every provider must
 * pass, with explicit opt-outs"): every provider operation goes through the same cases against the
 * simulator, with real HTTP end to end:
 *  - success: 200; a billable route settles a charge and leaves nothing held;
 *  - an upstream 4xx: the client's 400, nothing charged;
 *  - an upstream 429: 429 `upstream_rate_limited`, nothing charged;
 *  - an upstream 5xx: 502, nothing charged;
 *  - a timeout (headers later than the provider's `headers_ms`): 504, nothing charged;
 *  - a malformed answer: 502, nothing charged (opted out where the simulator's format has no
 *    malformed JSON answer: the chat formats break mid-stream instead, covered by test/e2e/faults*).
 * A job route's success is its accepted job, which owns the request's hold (the poller settles it).
 * Each route needs a canonical request in test/conformance/requests/<route id>.json: one request, or
 * an array of variants, the upstream chosen from each (`model` is added per operation; `$files` sends
 * it as a multipart form with those fixture files; `$completedVideo` stands for a completed video job
 * of the account); a proxy route without one fails the suite. One offering per operation.
 *
 * Operations a client request does not call directly are run where they are called: the messages-format
 * file upload through its local route (LOCAL_ROUTES), the video job's status and download operations
 * through the poller (`POST /admin/jobs/video-jobs/run`) under the same faults. Every operation of
 * every providers/*.yaml is run by some case or named in OPT_OUTS with the reason.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledOffering, CompiledProvider, CompiledRoute } from '../../src/config/types.js';
import { projectRoot } from '../../src/paths.js';
import { chooseUpstream } from '../../src/config/upstream-choice.js';
import { insertVideoJob } from '../../src/videos/records.js';
import { copyConfig } from '../helpers/config.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** Operations whose simulator has no malformed JSON answer (their formats break mid-stream instead). */
const NO_MALFORMED_ANSWER = new Set(['chat-completions', 'responses', 'messages', 'count-tokens']);
/** The providers' answer deadline in this suite, and a latency past it. */
const HEADERS_MS = 400;
const LATE_MS = 1500;

/**
 * Routes answered by the gateway itself that call one provider operation on the client's behalf, and
 * the statuses that differ from a proxy route's. An upload past its deadline has an unknown outcome
 * (the vendor may hold the file): a 502 that is never retried, not a 504 (spec 3; src/files/message-files.ts).
 */
const LOCAL_ROUTES: Record<string, { operation: string; statuses: Partial<Record<FaultName, number>> }> = {
  'files-upload': { operation: 'files-upload', statuses: { timeout: 502 } },
};

/** Provider operations (`<provider id>/<operation>`) no case runs, each with the reason and where it is tested instead. */
const OPT_OUTS: Record<string, string> = {
  'anthropic/files-get': 'called only when a skills execution publishes the files it generated (src/files/generated.ts), inside a messages request: test/e2e/skills.test.ts',
  'anthropic/files-content': 'called only when a skills execution publishes the files it generated (src/files/generated.ts), inside a messages request: test/e2e/skills.test.ts',
  'anthropic/files-delete': 'a client DELETE succeeds whatever the vendor answers (the files-cleanup job releases the vendor copy later, spec 3): test/e2e/message-files.test.ts',
  'vllm/chat-completions': 'a self-hosted provider, live only while VLLM_BASE_URL is set and never simulated (issue 32): test/e2e/compatible-vendors.test.ts against a loopback fake',
  'ollama/chat-completions': 'a self-hosted provider, live only while OLLAMA_BASE_URL is set and never simulated (issue 32): test/e2e/compatible-vendors.test.ts against a loopback fake',
  'openai/responses-get': "called only for a passthrough model's stored response, by GET /v1/responses/{id} for its owner (issue 31 item 3): test/e2e/responses-store.test.ts",
  'openai/responses-delete': "called only for a passthrough model's stored response, by DELETE /v1/responses/{id} for its owner: test/e2e/responses-store.test.ts",
  'bedrock/converse-stream': "sent instead of converse when a request streams (converse's stream_operation; this suite's requests do not stream): test/e2e/bedrock.test.ts",
  'openai/responses-input-items': "called only for a passthrough model's stored response, by GET /v1/responses/{id}/input_items for its owner: test/e2e/responses-store.test.ts",
};

type FaultName = 'client' | 'rateLimited' | 'server' | 'timeout' | 'malformed';
const FAULTS: Record<FaultName, { fault: Record<string, unknown>; status: number }> = {
  client: { fault: { status: 400 }, status: 400 },
  rateLimited: { fault: { status: 429 }, status: 429 },
  server: { fault: { status: 503 }, status: 502 },
  timeout: { fault: { latency_ms: LATE_MS }, status: 504 },
  malformed: { fault: { error_after_chunks: 1 }, status: 502 },
};

interface Case {
  route: CompiledRoute;
  /** `<provider id>/<operation>`. */
  operation: string;
  offering: CompiledOffering | null;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  polled: boolean;
  statuses: Partial<Record<FaultName, number>>;
}

let t: TestGateway;
const cases: Case[] = [];
const missing: string[] = [];

/** A request fixture: one request or an array of variants. */
function variantsOf(routeId: string): Array<Record<string, unknown>> | null {
  const file = join(projectRoot(), 'test/conformance/requests', `${routeId}.json`);
  if (!existsSync(file)) return null;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> | Array<Record<string, unknown>>;
  return Array.isArray(parsed) ? parsed : [parsed];
}

const headersOf = (route: CompiledRoute): Record<string, string> => Object.fromEntries(route.requiredHeaders.map((h) => [h.name, [...h.values][0]!]));

/** Every proxy route's cases: each variant with each available offering, one case per provider operation. */
function proxyCases(routes: CompiledRoute[], offerings: readonly CompiledOffering[], providers: ReadonlyMap<string, CompiledProvider>): void {
  for (const route of routes.filter((r) => r.manifest.handler === 'proxy')) {
    const variants = variantsOf(route.manifest.id);
    if (!variants) { missing.push(route.manifest.id); continue; }
    const seen = new Set<string>();
    for (const variant of variants) {
      for (const offering of offerings) {
        const provider = providers.get(offering.providerId)!;
        const serves = offering.enabled && offering.availability === 'available' && route.serviceTypes.has(offering.serviceType);
        const upstream = serves ? chooseUpstream(route, offering, provider, variant) : null;
        const key = `${provider.id}/${upstream?.operation}`;
        if (!upstream || seen.has(key)) continue;
        seen.add(key);
        const polled = provider.operations[upstream.operation]!.poll !== null;
        cases.push({ route, operation: key, offering, body: { ...variant, model: offering.id }, headers: headersOf(route), polled, statuses: {} });
      }
    }
  }
}

/** The local routes' cases (LOCAL_ROUTES), on the provider that declares the operation. */
function localCases(routes: CompiledRoute[], providers: ReadonlyMap<string, CompiledProvider>): void {
  for (const [routeId, local] of Object.entries(LOCAL_ROUTES)) {
    const route = routes.find((r) => r.manifest.id === routeId)!;
    const provider = [...providers.values()].find((p) => p.operations[local.operation])!;
    cases.push({ route, operation: `${provider.id}/${local.operation}`, offering: null, body: variantsOf(routeId)![0]!, headers: headersOf(route), polled: false, statuses: local.statuses });
  }
}

beforeAll(async () => {
  const copy = await copyConfig();
  for (const file of readdirSync(join(copy.dir, 'providers')).filter((f) => f.endsWith('.yaml'))) {
    await copy.editYaml(`providers/${file}`, (d) => { d.timeouts = { ...(d.timeouts ?? {}), headers_ms: HEADERS_MS }; });
  }
  // Shipped unavailable pending certification (providers/pii-redaction.yaml); its operation still conforms.
  await copy.editYaml('providers/pii-redaction.yaml', (d) => { for (const o of d.offerings) o.availability = 'available'; });
  // The video poller runs only when a test asks (POST /admin/jobs/video-jobs/run), never on its own.
  await copy.editYaml('gateway.config.yaml', (d) => { d.video_jobs.poll_schedule = '0 0 0 1 1 *'; });
  t = await startTestGateway({ configFile: copy.configFile });
  const gateway = t.gw.generation().gateway;
  proxyCases(gateway.routes, [...gateway.offerings.values()], gateway.providers);
  localCases(gateway.routes, gateway.providers);
}, 60_000);
afterAll(async () => { await t?.dispose(); });

/**
 * A multipart route's request (spec 4.8 audio): `$files` in the canonical request names each file
 * part's fixture under test/fixtures/files; the other fields are text fields.
 */
function formOf(body: Record<string, unknown>): FormData {
  const { $files, ...fields } = body as { $files: Record<string, { fixture: string; type: string }> };
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  for (const [name, f] of Object.entries($files)) {
    form.append(name, new Blob([new Uint8Array(readFileSync(join(projectRoot(), 'test/fixtures/files', f.fixture)))], { type: f.type }), f.fixture);
  }
  return form;
}

/**
 * A completed sora-2 job of the account (4 s, 1280x720), recorded as the poller leaves one, whose
 * vendor id the simulator reads as a job finished a minute ago (src/sim/openai-videos.ts encodes a
 * job's facts in its id): the source a remix names.
 */
async function completedVideo(accountId: string): Promise<string> {
  const id = `video_gw_${randomBytes(12).toString('hex')}`;
  const vendorJobId = `video_sim_${Buffer.from(JSON.stringify({ c: Date.now() - 60_000, s: '4', z: '1280x720', m: 'sora-2', o: 'ok' })).toString('base64url')}`;
  const at = new Date();
  await insertVideoJob(t.gw.db, {
    id, accountId, keyId: null, requestId: `req_${randomBytes(8).toString('hex')}`, holdId: `hold_${randomBytes(8).toString('hex')}`,
    offeringId: 'sora-2', providerId: 'openai', upstreamFormat: 'openai-videos', vendorJobId, sourceJobId: null, requestedSeconds: 4,
    size: '1280x720', state: 'completed', progress: 100, errorCode: null, errorMessage: null, outputFileId: null, billedSeconds: 4,
    amountNano: null, operationId: null, createdAt: at, nextPollAt: at, deadlineAt: at, finishedAt: at,
  });
  return id;
}

async function send(c: Case, account: { id: string; key: string }): Promise<{ status: number; body: any }> {
  const body = c.body.remix_video_id === '$completedVideo' ? { ...c.body, remix_video_id: await completedVideo(account.id) } : c.body;
  const multipart = body.$files !== undefined;
  const res = await fetch(`${t.url}${c.route.manifest.path}`, {
    method: 'POST', headers: { authorization: `Bearer ${account.key}`, ...(multipart ? {} : { 'content-type': 'application/json' }), ...c.headers },
    body: multipart ? formOf(body) : JSON.stringify(body),
  });
  const text = await res.text();
  // A binary answer (an MP3 of the speech and sound-effects routes) is not JSON: its type stands for it.
  if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return { status: res.status, body: res.headers.get('content-type') };
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * Runs one failure case: the fault on every attempt of the request (its retries included, issue 29),
 * the expected status, and nothing charged.
 */
async function failure(c: Case, name: FaultName): Promise<void> {
  const account = await t.account('5');
  await t.fault(FAULTS[name].fault);
  try {
    const answer = await send(c, account);
    expect(answer.status, `${c.route.manifest.id} via ${c.operation}: ${JSON.stringify(answer.body)}`).toBe(c.statuses[name] ?? FAULTS[name].status);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 5_000_000_000n, heldNano: 0n, openHolds: 0 });
    expect((await t.usage(account.id)).data).toEqual([]);
  } finally {
    await t.clearFaults();
  }
}

/** Every `<provider id>/<operation>` of every providers/*.yaml of the project. */
function declaredOperations(): string[] {
  const dir = join(projectRoot(), 'providers');
  return readdirSync(dir).filter((f) => f.endsWith('.yaml')).flatMap((file) => {
    const doc = parse(readFileSync(join(dir, file), 'utf8')) as { id: string; operations?: Record<string, unknown> };
    return Object.keys(doc.operations ?? {}).map((op) => `${doc.id}/${op}`);
  });
}

/** The video job route's poll and download operations, run by the poller. */
function pollerOperations(): string[] {
  const gateway = t.gw.generation().gateway;
  const job = gateway.routes.find((r) => r.manifest.job)!.manifest.job!;
  const [poll, output] = [job.poll_operation!, job.output_operation!];
  const provider = [...gateway.providers.values()].find((p) => p.operations[poll])!;
  return [`${provider.id}/${poll}`, `${provider.id}/${output}`];
}

describe('conformance', () => {
  it('has a canonical request for every proxy route, and finds operations to run', () => {
    expect(missing).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });

  it('runs every operation of every provider manifest, or names it in OPT_OUTS with a reason', () => {
    const covered = new Set([...cases.map((c) => c.operation), ...pollerOperations()]);
    const declared = declaredOperations();
    expect(declared.filter((op) => !covered.has(op) && !OPT_OUTS[op])).toEqual([]);
    // The opt-outs are real operations that no case runs: a stale entry fails too.
    expect(Object.keys(OPT_OUTS).filter((op) => !declared.includes(op) || covered.has(op))).toEqual([]);
  });

  it('success: 200, billed and settled', async () => {
    for (const c of cases) {
      const account = await t.account('5');
      const answer = await send(c, account);
      expect(answer.status, `${c.route.manifest.id} via ${c.operation}: ${JSON.stringify(answer.body)}`).toBe(200);
      const view = await t.settled(account.id);
      const rows = (await t.usage(account.id)).data;
      // A job route (spec 4.16): the accepted job owns the hold; the poller bills it (test/e2e/videos.test.ts).
      if (c.route.manifest.job) {
        expect([view!.openHolds, rows.length, answer.body.status], c.operation).toEqual([1, 0, 'queued']);
        continue;
      }
      expect(view).toMatchObject({ heldNano: 0n, openHolds: 0 });
      if (c.route.billable) {
        expect(rows.length, c.operation).toBeGreaterThan(0);
        expect(view!.balanceNano).toBe(5_000_000_000n - rows.reduce((sum, r) => sum + r.amountNano, 0n));
      } else {
        expect(rows).toEqual([]);
      }
    }
  });

  it('an upstream 4xx is the client\'s 400, nothing charged', async () => {
    for (const c of cases) await failure(c, 'client');
  });

  it('an upstream 429 is 429 upstream_rate_limited, nothing charged', async () => {
    for (const c of cases) await failure(c, 'rateLimited');
  });

  it('an upstream 5xx is 502, nothing charged', async () => {
    for (const c of cases) await failure(c, 'server');
  });

  it('an upstream past its answer deadline is 504, nothing charged', async () => {
    for (const c of cases) await failure(c, 'timeout');
  });

  it('a malformed answer is 502, nothing charged', async () => {
    // A polled operation's first answer is a 202 with no body: its malformed answer is the first poll's.
    for (const c of cases.filter((x) => !NO_MALFORMED_ANSWER.has(x.route.manifest.id))) await failure(c, 'malformed');
  });
});

/**
 * The video job's status and download operations (routes/videos-generations.yaml `job`), run by the
 * poller, through the same faults: each leaves the job running with its hold and nothing charged
 * (the next run retries it, spec 3 "Video job"); the success completes the job and bills it once.
 * A download's malformed answer is a body that ends cleanly but short (not a whole MP4: never kept nor
 * billed); a cut connection is the same fault's other form.
 */
describe('conformance: the video job poller', () => {
  type PollerCase = { name: string; op: 'poll' | 'output'; faults: Array<Record<string, unknown>> };
  const pollerCases: PollerCase[] = [
    ...(['poll', 'output'] as const).flatMap((op) => (Object.keys(FAULTS) as FaultName[]).map((name) => ({
      name: `${op} ${name}`, op,
      // The output operation runs after a successful poll: a fault-free first answer lets the poll through.
      faults: [...(op === 'output' ? [{ times: 1 }] : []), { ...FAULTS[name].fault, times: 1 }],
    }))),
    { name: 'output cut', op: 'output', faults: [{ times: 1 }, { truncate_after_chunks: 1, times: 1 }] },
    { name: 'success', op: 'poll', faults: [] },
  ];
  const jobs = new Map<string, { account: { id: string; key: string }; jobId: string }>();
  const FAR = new Date(Date.now() + 365 * 86_400_000);

  const setDue = (jobId: string, at: Date): Promise<unknown> => t.gw.db.query('UPDATE video_jobs SET next_poll_at = $2 WHERE id = $1', [jobId, at]);
  async function runPoller(): Promise<Record<string, number>> {
    const res = await fetch(`${t.url}/admin/jobs/video-jobs/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const run = await res.json() as { ran: boolean; result: Record<string, number> };
    expect([res.status, run.ran]).toEqual([200, true]);
    return run.result;
  }

  beforeAll(async () => {
    const create = cases.find((c) => c.route.manifest.job && c.body.remix_video_id === undefined)!;
    for (const c of pollerCases) {
      const account = await t.account('5');
      const answer = await send(create, account);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      jobs.set(c.name, { account, jobId: answer.body.id });
    }
    // Only the job under test is ever due (the first suite's accepted jobs too wait).
    await t.gw.db.query('UPDATE video_jobs SET next_poll_at = $1', [FAR]);
    // The simulator's jobs complete 1.5 s after their creation (src/sim/openai-videos.ts).
    await new Promise((ok) => setTimeout(ok, 1_700));
  }, 60_000);

  it('covers the job route\'s poll and output operations', () => {
    expect(pollerOperations()).toEqual(['openai/videos-get', 'openai/videos-content']);
  });

  for (const c of pollerCases) {
    it(`${c.name}: ${c.name === 'success' ? 'completes the job and bills it once' : 'the job stays due with its hold, nothing charged'}`, async () => {
      const { account, jobId } = jobs.get(c.name)!;
      const before = await t.settled(account.id);
      for (const fault of c.faults) await t.fault(fault);
      await setDue(jobId, new Date(Date.now() - 1_000));
      try {
        const report = await runPoller();
        const [job] = await t.gw.db.query<{ state: string }>('SELECT state FROM video_jobs WHERE id = $1', [jobId]);
        const view = await t.settled(account.id);
        const rows = (await t.usage(account.id)).data;
        if (c.name === 'success') {
          expect(report).toMatchObject({ polled: 1, completed: 1, errors: 0 });
          expect([job!.state, view!.openHolds, view!.heldNano, rows.length]).toEqual(['completed', 0, 0n, 1]);
          expect(view!.balanceNano).toBe(5_000_000_000n - rows[0]!.amountNano);
          return;
        }
        expect(report, c.name).toMatchObject({ polled: 1, completed: 0, failed: 0, errors: 1 });
        expect(job!.state, c.name).not.toBe('completed');
        expect(rows, c.name).toEqual([]);
        expect(view, c.name).toEqual(before);
      } finally {
        await t.clearFaults();
        await setDue(jobId, FAR);
      }
    });
  }
});
