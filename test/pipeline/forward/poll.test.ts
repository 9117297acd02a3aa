/**
 * Jobs polled inside the request: real HTTP through undici to a loopback server playing a vendor that
 * answers 202 with an operation-location, then the job's states. Success after several polls, a failed
 * job, a job past the deadline, and a location on another origin (never followed).
 */
import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyPool } from '../../../src/upstream/key-pool.js';
import type { CompiledPoll, CompiledProvider } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { jobStart, pollJob } from '../../../src/pipeline/forward/poll.js';
import { UpstreamClient } from '../../../src/upstream/client.js';

/** Job id -> the statuses its polls answer, in order (the last repeats). */
const jobs = new Map<string, string[]>();
let polls = 0;
let server: http.Server;
let base = '';
/** Another loopback origin that must never be called (a foreign polling URL). */
let canaryServer: http.Server;
let canary = '';
let canaryHits = 0;

function provider(): CompiledProvider {
  return {
    id: 'vendor', baseUrl: base, keys: new KeyPool(['k']), auth: { header: 'x-key', prefix: '' }, simulated: false, headers: {},
    timeouts: { connectMs: 1000, headersMs: 5000, idleMs: 5000 }, skills: null,
    operations: { start: { method: 'POST', path: '/jobs', format: 'x', request: 'json', answer: 'json', query: '', poll: null, binary: null, headers: {}, features: {} } },
  };
}

const poll = (over: Partial<CompiledPoll> = {}): CompiledPoll => ({
  locationHeader: 'operation-location', locationPointer: null, hosts: [], statusPointer: ['status'], succeeded: new Set(['succeeded', 'partiallyCompleted']),
  failed: new Set(['failed', 'cancelled']), moderated: new Set(), intervalMs: 20, deadlineMs: 2000, output: null, ...over,
});

/** Starts the job and polls it, as the forward stage does. */
async function run(client: UpstreamClient, p: CompiledPoll, job: string, signal = new AbortController().signal): Promise<Awaited<ReturnType<typeof pollJob>>> {
  const start = await jobStart(p, await start_(client, job));
  if (!('location' in start)) throw new Error('no job location');
  return pollJob(client, provider(), p, start.location, start.headers, signal);
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const id = /^\/jobs\/(\w+)/.exec(req.url ?? '')?.[1];
    if (req.method === 'POST' && req.url?.startsWith('/body/')) {
      // A vendor naming its job in a 200 JSON body (location_pointer); `direct` answers at once, `foreign` elsewhere.
      const job = req.url.slice('/body/'.length);
      const polling = job === 'foreign' ? `${canary}/jobs/x` : `${base}/jobs/${job}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(job === 'direct' ? { status: 'succeeded', answer: 7 } : { id: job, polling_url: polling }));
      return;
    }
    if (req.method === 'POST') {
      res.writeHead(202, { 'operation-location': `${base}${req.url}` }).end();
      return;
    }
    polls += 1;
    expect(req.headers['x-key']).toBe('k');
    if (id === 'garbled') { res.writeHead(200, { 'content-type': 'application/json' }).end('{"status": "runn'); return; }
    const states = jobs.get(id!) ?? ['failed'];
    const status = states.length > 1 ? states.shift()! : states[0]!;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status, result: status === 'succeeded' ? { answer: 42 } : null }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  canaryServer = http.createServer((_req, res) => { canaryHits += 1; res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"succeeded"}'); });
  await new Promise<void>((ok) => canaryServer.listen(0, '127.0.0.1', ok));
  canary = `http://127.0.0.1:${(canaryServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
  await new Promise((ok) => canaryServer.close(ok));
});

async function start_(client: UpstreamClient, job: string): Promise<Awaited<ReturnType<UpstreamClient['send']>>> {
  const p = provider();
  p.operations.start!.path = `/jobs/${job}`;
  return client.send(p, 'start', {}, new AbortController().signal);
}

describe('pollJob', () => {
  it('polls until the job succeeds and answers its final body', async () => {
    const client = new UpstreamClient();
    jobs.set('ok', ['notStarted', 'running', 'running', 'succeeded']);
    polls = 0;
    const signal = new AbortController().signal;
    const result = await run(client, poll(), 'ok', signal);
    expect(result.body).toEqual({ status: 'succeeded', result: { answer: 42 } });
    expect(polls).toBe(4);
    // The pauses leave no listener on the request's signal (a long job polls many times on it).
    expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(polls);
    await client.close();
  });

  it('fails with 502 when the job fails, and 504 past the deadline', async () => {
    const client = new UpstreamClient();
    jobs.set('bad', ['running', 'failed']);
    const failed = await run(client, poll(), 'bad').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(GatewayError);
    expect(failed).toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream job ended with status "failed".' });
    jobs.set('slow', ['running']);
    const late = await run(client, poll({ deadlineMs: 150 }), 'slow').catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'upstream_timeout', status: 504 });
    await client.close();
  });

  it('fails with 502 at once on a job status that is not JSON (no waiting for the deadline)', async () => {
    const client = new UpstreamClient();
    polls = 0;
    const started = Date.now();
    const garbled = await run(client, poll({ deadlineMs: 60_000 }), 'garbled').catch((e: unknown) => e);
    expect(garbled).toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream provider sent a malformed job status.' });
    expect(polls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    await client.close();
  });

  it('never follows a job location on another origin', async () => {
    const client = new UpstreamClient();
    await expect(client.poll(provider(), 'http://127.0.0.2:9/jobs/x', new AbortController().signal)).rejects.toMatchObject({ code: 'upstream_error', message: 'The upstream provider sent a job location on another host.' });
    await client.close();
  });
});

describe('jobs named in a JSON body (location_pointer)', () => {
  const bodyPoll = (over: Partial<CompiledPoll> = {}): CompiledPoll => poll({ locationHeader: null, locationPointer: ['polling_url'], succeeded: new Set(['Ready']), failed: new Set(['Error']), moderated: new Set(['Content Moderated']), ...over });
  const submit = async (client: UpstreamClient, job: string): Promise<Awaited<ReturnType<UpstreamClient['send']>>> => {
    const p = provider();
    p.operations.start!.path = `/body/${job}`;
    return client.send(p, 'start', {}, new AbortController().signal);
  };

  it('polls the URL a 200 body names, and treats a body without one as the direct answer', async () => {
    const client = new UpstreamClient();
    jobs.set('flex', ['Pending', 'Ready']);
    const start = await jobStart(bodyPoll(), await submit(client, 'flex'));
    expect(start).toMatchObject({ location: `${base}/jobs/flex` });
    const result = await pollJob(client, provider(), bodyPoll(), (start as { location: string }).location, start.headers, new AbortController().signal);
    expect(result.body).toMatchObject({ status: 'Ready' });
    expect(await jobStart(bodyPoll(), await submit(client, 'direct'))).toMatchObject({ body: { status: 'succeeded', answer: 7 } });
    await client.close();
  });

  it('ends a moderated job with a 400 content_policy_violation, and a failed one with a 502', async () => {
    const client = new UpstreamClient();
    for (const [job, status, code, http] of [['mod', 'Content Moderated', 'content_policy_violation', 400], ['err', 'Error', 'upstream_error', 502]] as const) {
      jobs.set(job, ['Pending', status]);
      const start = await jobStart(bodyPoll(), await submit(client, job));
      const error = await pollJob(client, provider(), bodyPoll(), (start as { location: string }).location, start.headers, new AbortController().signal).catch((e: unknown) => e);
      expect(error).toMatchObject({ code, status: http });
      expect((error as Error).message).toContain(status);
    }
    await client.close();
  });

  it('refuses a polling URL on a host the poll does not declare, without calling it (502, at once)', async () => {
    const client = new UpstreamClient();
    canaryHits = 0;
    const start = await jobStart(bodyPoll(), await submit(client, 'foreign'));
    // Another loopback port is another origin; https patterns never admit plain http.
    for (const hosts of [[], ['127.0.0.1'], ['*.bfl.ai']]) {
      const started = Date.now();
      const error = await pollJob(client, provider(), bodyPoll({ hosts, intervalMs: 1000 }), (start as { location: string }).location, start.headers, new AbortController().signal).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream provider sent a job location on another host.' });
      expect(Date.now() - started).toBeLessThan(500);
    }
    await expect(client.poll(provider(), `${canary}/jobs/x`, new AbortController().signal, ['*.bfl.ai'])).rejects.toMatchObject({ code: 'upstream_error' });
    expect(canaryHits).toBe(0);
    await client.close();
  });
});
