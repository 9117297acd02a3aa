/**
 * Draining shutdown (SIGTERM, issue 4): stop accepting, let requests and streams in flight finish
 * up to a deadline, then end the stragglers as if their clients had left (so each settles what it
 * delivered: nothing in flight loses its usage row), and only then close.
 */
import type { FastifyInstance } from 'fastify';
import type { RequestContext } from '../pipeline/context.js';

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

/** Drains the server; resolves once every request in flight has settled (or `deadlineMs` + a grace passed). */
export async function drain(app: FastifyInstance, inflight: Set<RequestContext>, deadlineMs: number, log: (message: string, fields?: Record<string, unknown>) => void): Promise<void> {
  const closing = app.close();
  log('draining: no new connections', { in_flight: inflight.size, deadline_ms: deadlineMs });
  if (!(await until(() => inflight.size === 0, deadlineMs))) {
    log('drain deadline reached: ending requests in flight', { in_flight: inflight.size });
    for (const ctx of inflight) ctx.clientGone.abort();
    await until(() => inflight.size === 0, 5_000);
  }
  app.server.closeAllConnections();
  await closing;
}
