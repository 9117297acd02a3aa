/**
 * Jobs polled inside the request: real HTTP through undici to a loopback server playing a vendor that
 * answers 202 with an operation-location, then the job's states. Success after several polls, a failed
 * job, a job past the deadline, and a location on another origin (never followed).
 */
import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledPoll, CompiledProvider } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { pollJob } from '../../../src/pipeline/forward/poll.js';
import { UpstreamClient } from '../../../src/upstream/client.js';

/** Job id -> the statuses its polls answer, in order (the last repeats). */
const jobs = new Map<string, string[]>();
let polls = 0;
let server: http.Server;
let base = '';

function provider(): CompiledProvider {
  return {
    id: 'vendor', baseUrl: base, apiKey: 'k', auth: { header: 'x-key', prefix: '' }, simulated: false, headers: {},
    timeouts: { connectMs: 1000, headersMs: 5000, idleMs: 5000 }, skills: null,
    operations: { start: { method: 'POST', path: '/jobs', format: 'x', query: '', poll: null, binary: null, headers: {}, features: {} } },
  };
}

const poll = (over: Partial<CompiledPoll> = {}): CompiledPoll => ({
  locationHeader: 'operation-location', statusPointer: ['status'], succeeded: new Set(['succeeded', 'partiallyCompleted']),
  failed: new Set(['failed', 'cancelled']), intervalMs: 20, deadlineMs: 2000, ...over,
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const id = /^\/jobs\/(\w+)/.exec(req.url ?? '')?.[1];
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
});
afterAll(async () => { await new Promise((ok) => server.close(ok)); });

async function start(client: UpstreamClient, job: string): Promise<Awaited<ReturnType<UpstreamClient['send']>>> {
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
    const result = await pollJob(client, provider(), poll(), await start(client, 'ok'), signal);
    expect(result.body).toEqual({ status: 'succeeded', result: { answer: 42 } });
    expect(polls).toBe(4);
    // The pauses leave no listener on the request's signal (a long job polls many times on it).
    expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(polls);
    await client.close();
  });

  it('fails with 502 when the job fails, and 504 past the deadline', async () => {
    const client = new UpstreamClient();
    jobs.set('bad', ['running', 'failed']);
    const failed = await pollJob(client, provider(), poll(), await start(client, 'bad'), new AbortController().signal).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(GatewayError);
    expect(failed).toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream job ended with status "failed".' });
    jobs.set('slow', ['running']);
    const late = await pollJob(client, provider(), poll({ deadlineMs: 150 }), await start(client, 'slow'), new AbortController().signal).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'upstream_timeout', status: 504 });
    await client.close();
  });

  it('fails with 502 at once on a job status that is not JSON (no waiting for the deadline)', async () => {
    const client = new UpstreamClient();
    polls = 0;
    const started = Date.now();
    const garbled = await pollJob(client, provider(), poll({ deadlineMs: 60_000 }), await start(client, 'garbled'), new AbortController().signal).catch((e: unknown) => e);
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
