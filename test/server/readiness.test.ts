/** /readyz logic: every check its own status; any dependency down makes the whole unavailable. */
import { describe, expect, it } from 'vitest';
import { readiness, type ConfigCheck } from '../../src/server/readiness.js';

const config = (): ConfigCheck => ({ status: 'ok', loaded_at: '2026-01-01T00:00:00.000Z', routes: 3, offerings: 2, last_reload: null });
const up = (target: string) => async () => ({ status: 'ok' as const, target, since: '2026-01-01T00:00:00.000Z' });

describe('readiness', () => {
  it('is ok when every dependency answers', async () => {
    const r = await readiness({ store: up('s'), limiter: up('l'), config }, { store: 's', limiter: 'l' });
    expect(r).toMatchObject({ status: 'ok', checks: { store: { status: 'ok' }, limiter: { status: 'ok' }, config: { status: 'ok' } } });
  });

  it('turns a failing probe into an unavailable check with its reason', async () => {
    const r = await readiness({ store: async () => { throw new Error('connect ECONNREFUSED'); }, limiter: up('l'), config }, { store: 'PostgreSQL h/db', limiter: 'l' });
    expect(r.status).toBe('unavailable');
    expect(r.checks.store).toMatchObject({ status: 'unavailable', target: 'PostgreSQL h/db', error: 'connect ECONNREFUSED' });
    expect(r.checks.limiter.status).toBe('ok');
  });

  it('treats a probe that never answers as unavailable after its bound', async () => {
    const r = await readiness({ store: up('s'), limiter: () => new Promise(() => undefined), config }, { store: 's', limiter: 'redis' });
    expect(r.status).toBe('unavailable');
    expect(r.checks.limiter).toMatchObject({ status: 'unavailable', target: 'redis', error: 'no answer within 2000 ms' });
  });
});
