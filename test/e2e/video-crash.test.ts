/**
 * kill -9 while a video job runs (issue 11 item 5): the job and the hold it owns are in the store, so a
 * new process on the same store polls the job to its end and bills it once; the ledger reconciles.
 * Runs the built gateway as a child process (test/helpers/process.ts), with the poller every second
 * (a config copy); on the pglite project on an on-disk data folder so the data survives the crash.
 * The simulator's jobs are stateless (their facts are in their ids), so the restarted process's
 * simulator finishes a job the killed one accepted, as a real vendor would.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const ADMIN_TOKEN = 'video-crash-admin-token-0123456789';

describeStore('kill -9 while a video job runs', () => {
  const children: ChildProcess[] = [];
  let pg: Awaited<ReturnType<typeof openTestDb>> | undefined;
  let dataDir: string;
  let copy: ConfigCopy;

  beforeAll(async () => {
    if (storeKind === 'postgres') pg = await openTestDb();
    dataDir = await mkdtemp(join(tmpdir(), 'gw-video-crash-'));
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.video_jobs = { poll_schedule: '* * * * * *', deadline_seconds: 600 }; });
  });

  afterAll(async () => {
    await Promise.all(children.map(kill9));
    await pg?.dispose();
    await rm(dataDir, { recursive: true, force: true });
    await rm(copy.dir, { recursive: true, force: true });
  }, 60_000);

  async function start(): Promise<GatewayProcess> {
    // Blobs (the stored video) live under the data folder on both stores; the ledger in PGlite there or in PostgreSQL.
    const gw = await spawnGateway({ GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CONFIG: copy.configFile, DATABASE_URL: pg?.databaseUrl, GATEWAY_DATA_DIR: dataDir });
    children.push(gw.child);
    return gw;
  }

  async function admin<T = any>(gw: GatewayProcess, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${gw.url}/admin${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /admin${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  it('finishes and bills the job once after a restart on the same store', async () => {
    const first = await start();
    const account = await admin<{ id: string; key: string }>(first, 'POST', '/accounts', { balance_usd: '5' });
    const res = await fetch(`${first.url}/v1/videos/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2', prompt: 'A lighthouse in the storm.', seconds: 4 }),
    });
    const job = await res.json() as { id: string; status: string };
    expect([res.status, job.status]).toEqual([200, 'queued']);
    // Killed before its first poll (2 s after submission): the job and its 4 s hold are in the store.
    await kill9(first.child);

    const second = await start();
    const deadline = Date.now() + 30_000;
    let view: { status: string; usage: unknown; video_url: string | null } = { status: 'queued', usage: null, video_url: null };
    while (!['completed', 'failed'].includes(view.status) && Date.now() < deadline) {
      await new Promise((ok) => setTimeout(ok, 300));
      view = await (await fetch(`${second.url}/v1/videos/generations/${job.id}`, { headers: { authorization: `Bearer ${account.key}` } })).json() as typeof view;
    }
    expect(view).toMatchObject({ status: 'completed', usage: { seconds: 4, cost_usd: '0.4' } });
    const video = await fetch(view.video_url!, { headers: { range: 'bytes=0-3' } });
    expect(video.status).toBe(206);
    await video.arrayBuffer();

    const after = await admin(second, 'GET', `/accounts/${account.id}`);
    expect(after).toMatchObject({ balance_usd: '4.6', held_usd: '0', open_holds: 0 });
    const usage = await admin<{ data: Array<{ unit: string; quantity: number; amount_usd: string }> }>(second, 'GET', `/accounts/${account.id}/usage`);
    expect(usage.data.map((r) => [r.unit, r.quantity, r.amount_usd])).toEqual([['second', 4, '0.4']]);
    const reconcile = await admin<{ ok: boolean }>(second, 'GET', '/reconcile');
    expect(reconcile.ok).toBe(true);
  }, 120_000);
});
