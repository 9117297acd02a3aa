/**
 * Jobs polled inside the request (issue 9 point 4; issue 11 item 4): an operation that answers with a
 * job is polled, under the provider's interval and deadline, until its status says it succeeded (the
 * poll answer is then the result), failed (502) or was refused on content grounds (400
 * content_policy_violation). The first answer names the job in a header (a 202 and `location_header`,
 * e.g. a language service's analyze-text jobs) or in its JSON body (`location_pointer`, e.g. an image
 * vendor answering 200 `{id, polling_url}`); either way the job is polled whenever the location is
 * present. A polling URL must satisfy the host rule (src/upstream/vendor-url.ts) before anything is
 * sent there. Past the deadline the request ends with 504; in every failure nothing is charged (spec 1).
 */
import type { CancelSignal } from '../../cancel.js';
import type { CompiledPoll, CompiledProvider } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { readPointer } from '../../meters/pointer.js';
import type { UpstreamClient, UpstreamResponse } from '../../upstream/client.js';
import { allowedVendorUrl } from '../../upstream/vendor-url.js';

/** The job's result: its final answer and that answer's headers. */
export interface PolledResult { body: unknown; headers: Record<string, string>; }

/** Waits `ms`, or less if the client leaves; the listener goes with the wait (a long job polls many times on one signal). */
const sleep = (ms: number, signal: CancelSignal): Promise<void> => new Promise((resolve) => {
  const stop = (): void => { clearTimeout(timer); resolve(); };
  const timer = setTimeout(() => { signal.removeEventListener('abort', stop); resolve(); }, ms);
  signal.addEventListener('abort', stop, { once: true });
});

async function readJson(response: UpstreamResponse): Promise<unknown> {
  const text = await response.body.text();
  try { return JSON.parse(text); } catch { return null; }
}

/** The pause before the next poll: the manifest's interval, or the job's Retry-After when longer. */
function pauseMs(poll: CompiledPoll, headers: Record<string, string>): number {
  const retry = Number(headers['retry-after']);
  return Number.isFinite(retry) && retry * 1000 > poll.intervalMs ? Math.min(retry * 1000, 10_000) : poll.intervalMs;
}

/** What the first answer said: where to poll the job, or (no location) the direct answer, read already. */
export type JobStart = { location: string; headers: Record<string, string> } | { body: unknown; headers: Record<string, string> };

/** Reads the first answer of an operation that may answer with a job (`location_header` or `location_pointer`). */
export async function jobStart(poll: CompiledPoll, first: UpstreamResponse): Promise<JobStart> {
  const headers = first.headers;
  if (poll.locationPointer) {
    const body = await readJson(first);
    const location = readPointer(body, poll.locationPointer);
    return typeof location === 'string' && location !== '' ? { location, headers } : { body, headers };
  }
  const location = poll.locationHeader ? headers[poll.locationHeader] : undefined;
  if (location) {
    await first.body.dump();
    return { location, headers };
  }
  if (first.status === 202) {
    await first.body.dump();
    throw new GatewayError('upstream_error', 'The upstream provider accepted the job without saying where to poll it.');
  }
  return { body: await readJson(first), headers };
}

/** The job's end for a status, if it is one: the result, or the error the request ends with. */
function ended(poll: CompiledPoll, status: unknown): 'succeeded' | GatewayError | null {
  if (typeof status !== 'string') return null;
  if (poll.succeeded.has(status)) return 'succeeded';
  if (poll.failed.has(status)) return new GatewayError('upstream_error', `The upstream job ended with status "${status}".`);
  if (poll.moderated.has(status)) {
    return new GatewayError('content_policy_violation', `The upstream provider refused the request on content grounds (job status "${status}"); nothing was charged.`);
  }
  return null;
}

/** Polls the job at `location` (from jobStart), until it ends. */
export async function pollJob(upstream: UpstreamClient, provider: CompiledProvider, poll: CompiledPoll, location: string, firstHeaders: Record<string, string>, signal: CancelSignal): Promise<PolledResult> {
  // Checked before waiting: a location on a host the manifest does not declare is refused at once, never called.
  allowedVendorUrl(location, provider.baseUrl, poll.hosts, 'job location');
  const deadline = Date.now() + poll.deadlineMs;
  let pause = pauseMs(poll, firstHeaders);
  for (;;) {
    if (Date.now() + pause > deadline) throw new GatewayError('upstream_timeout', `The upstream job did not finish within ${Math.round(poll.deadlineMs / 1000)} s.`);
    await sleep(pause, signal);
    if (signal.aborted) throw new GatewayError('upstream_error', 'The client left while the job ran.');
    const answer = await upstream.poll(provider, location, signal, poll.hosts);
    const body = await readJson(answer);
    if (answer.status >= 400) throw new GatewayError('upstream_error', `Polling the upstream job failed (HTTP ${answer.status}).`);
    // A job status that is not JSON will not become readable by waiting: a malformed answer, not a running job.
    if (!body || typeof body !== 'object') throw new GatewayError('upstream_error', 'The upstream provider sent a malformed job status.');
    const end = ended(poll, readPointer(body, poll.statusPointer));
    if (end === 'succeeded') return { body, headers: answer.headers };
    if (end) throw end;
    pause = pauseMs(poll, answer.headers);
  }
}
