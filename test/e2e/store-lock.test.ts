/**
 * One gateway per PGlite data folder, end to end (issue 8): a second `npm start` on a folder in use
 * exits 1 naming the folder and the first gateway's PID, without touching the data; after the first
 * is killed with -9 its stale lock is recovered, and the next start serves the same data (the demo
 * account of the first start is still there, and no second one is created). A SIGTERM stop removes
 * the lock.
 *
 * Runs the built gateway (`dist/src/main.js`, built by `npm test`) as child processes; pglite project
 * only (the postgres project has no data folder).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const ADMIN_TOKEN = 'store-lock-test-admin-token-0123456789';

describe.skipIf(storeKind !== 'pglite')('one gateway per data folder', () => {
  const children: ChildProcess[] = [];
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-store-lock-'));
  });
  afterAll(async () => {
    await Promise.all(children.map(kill9));
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** `npm start` on the test folder (embedded store: DATABASE_URL removed). */
  async function start(): Promise<GatewayProcess> {
    const gw = await spawnGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, DATABASE_URL: undefined });
    children.push(gw.child);
    return gw;
  }

  it('refuses a second process, recovers the lock after kill -9 with the data intact', async () => {
    const first = await start();
    const demo = /Demo account (acct_\S+) created/.exec(first.output());
    expect(demo, first.output()).not.toBeNull();
    const accountId = demo![1]!;
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(true);

    // 1. A second gateway on the same folder exits 1 with the folder and the holder's PID, no stack.
    const refused = await start().then(
      (gw) => { throw new Error(`the second gateway started on a folder in use:\n${gw.output()}`); },
      (error: unknown) => (error as Error).message,
    );
    expect(refused).toContain('gateway exited (1)');
    expect(refused).toContain(`gateway failed to start: the data folder ${dataDir} is in use by another gateway process (PID ${first.child.pid})`);
    expect(refused).not.toMatch(/\n\s+at /);
    expect(refused).not.toContain('Demo account');

    // ...and the first one still serves.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    // 2. kill -9 the holder: its lock stays behind, naming a dead PID.
    await kill9(first.child);
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(true);

    // 3. The next start recovers the lock and serves the first start's data.
    const third = await start();
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
    expect(third.output()).not.toContain('Demo account');
    const res = await fetch(`${third.url}/admin/accounts/${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: accountId, balance_usd: '10' });

    // 4. A clean stop (SIGTERM drains, closes the store) removes the lock.
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
  }, 120_000);
});
