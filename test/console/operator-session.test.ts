/**
 * An operator session ends when the admin token it signed in with changes, or when the operator view
 * is turned off (no token): the session keeps the token's digest and every request checks it.
 */
import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionOf, type ConsoleDeps } from '../../src/console/context.js';
import { openSession } from '../../src/console/store.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('operator sessions and the admin token', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  const request = (id: string): FastifyRequest => ({ headers: { cookie: `gw_session=${id}` } }) as unknown as FastifyRequest;
  const deps = (adminToken: string | null): ConsoleDeps => ({ db: t.gw.db, clock: { now: () => new Date() }, adminToken }) as unknown as ConsoleDeps;

  it('accepts the session under the token it signed in with, and not under another or none', async () => {
    const id = await openSession(t.gw.db, { operator: true, adminToken: 'first-admin-token-not-real' }, 60_000, new Date());
    expect((await sessionOf(deps('first-admin-token-not-real'), request(id)))?.operator).toBe(true);
    expect(await sessionOf(deps('second-admin-token-not-real'), request(id))).toBeNull();
    expect(await sessionOf(deps(null), request(id))).toBeNull();
  });
});
