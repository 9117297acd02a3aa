/**
 * Jobs polled inside the request (issue 9 point 4): an operation that answers with a job (202 and a
 * location header, e.g. a language service's analyze-text jobs) is polled, under the provider's interval and
 * deadline, until its status says it succeeded (the poll answer is then the result) or failed (502).
 * Past the deadline the request ends with 504; either way nothing is charged (spec 1).
 */
import type { CompiledPoll, CompiledProvider } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { readPointer } from '../../meters/pointer.js';
import type { UpstreamClient, UpstreamResponse } from '../../upstream/client.js';

/** The job's result: its final answer and that answer's headers. */
export interface PolledResult { body: unknown; headers: Record<string, string>; }

/** Waits `ms`, or less if the client leaves; the listener goes with the wait (a long job polls many times on one signal). */
const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
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

/** Polls the job the first answer points to, until it ends. */
export async function pollJob(upstream: UpstreamClient, provider: CompiledProvider, poll: CompiledPoll, first: UpstreamResponse, signal: AbortSignal): Promise<PolledResult> {
  const location = first.headers[poll.locationHeader];
  await first.body.dump();
  if (!location) throw new GatewayError('upstream_error', 'The upstream provider accepted the job without saying where to poll it.');
  const deadline = Date.now() + poll.deadlineMs;
  let pause = pauseMs(poll, first.headers);
  for (;;) {
    if (Date.now() + pause > deadline) throw new GatewayError('upstream_timeout', `The upstream job did not finish within ${Math.round(poll.deadlineMs / 1000)} s.`);
    await sleep(pause, signal);
    if (signal.aborted) throw new GatewayError('upstream_error', 'The client left while the job ran.');
    const answer = await upstream.poll(provider, location, signal);
    const body = await readJson(answer);
    if (answer.status >= 400) throw new GatewayError('upstream_error', `Polling the upstream job failed (HTTP ${answer.status}).`);
    // A job status that is not JSON will not become readable by waiting: a malformed answer, not a running job.
    if (!body || typeof body !== 'object') throw new GatewayError('upstream_error', 'The upstream provider sent a malformed job status.');
    const status = readPointer(body, poll.statusPointer);
    if (typeof status === 'string' && poll.succeeded.has(status)) return { body, headers: answer.headers };
    if (typeof status === 'string' && poll.failed.has(status)) throw new GatewayError('upstream_error', `The upstream job ended with status "${status}".`);
    pause = pauseMs(poll, answer.headers);
  }
}
