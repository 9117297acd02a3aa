/**
 * kill -9 of the gateway in the middle of a temporary-file upload (issue 10 item 2), local blob store.
 * The client sends half of the declared bytes and stalls; the gateway dies with a pending record and
 * a `.part-` file under <data>/blobs. After a restart on the same data, the files cleanup run through
 * the admin API once the pending lifetime has passed leaves no orphan blob (no object, no partial)
 * and no orphan record (it is marked deleted).
 *
 * The child process cannot share a ManualClock, so a config copy sets short lifetimes
 * (pending_ttl_seconds: 20, upload_url_ttl_seconds: 5, the partial uploads' grace) and the test waits
 * for the real pending expiry (about 20 s: under a loaded machine the restart took over 7 s, which the
 * shortest lifetime, 8 s, left no room for). Its cleanup_schedule is once a year: only the admin API
 * runs the job.
 *
 * Runs the built gateway (`dist/src/main.js`, built by `npm test`) as a child process: on the pglite
 * project with PGlite in the data folder, on the postgres project against a fresh database (blobs in
 * the data folder either way). Loopback only.
 */
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CleanupReport } from '../../src/files/cleanup.js';
import { openDb, type Db } from '../../src/store/db.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const ADMIN_TOKEN = 'upload-crash-test-admin-token-0123456789';
const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

interface Authorization { file_id: string; upload_url: string; method: string; headers: Record<string, string> }
interface TempRow { state: string; deleted_reason: string | null; expires_at: Date | string }

/** Every regular file under `dir` (relative paths); none when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

describeStore('kill -9 mid-upload', () => {
  const children: ChildProcess[] = [];
  let pg: Awaited<ReturnType<typeof openTestDb>> | undefined;
  let dataDir: string;
  let copy: ConfigCopy;

  beforeAll(async () => {
    if (storeKind === 'postgres') pg = await openTestDb();
    dataDir = await mkdtemp(join(tmpdir(), 'gw-upload-crash-'));
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => {
      Object.assign(doc.files, { pending_ttl_seconds: 20, upload_url_ttl_seconds: 5, cleanup_schedule: '0 0 0 1 1 *' });
    });
  });
  afterAll(async () => {
    await Promise.all(children.map(kill9));
    await pg?.dispose();
    await rm(dataDir, { recursive: true, force: true });
    await rm(copy.dir, { recursive: true, force: true });
  }, 60_000);

  async function start(): Promise<GatewayProcess> {
    const gw = await spawnGateway({
      GATEWAY_CONFIG: copy.configFile, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_DATA_DIR: dataDir,
      DATABASE_URL: pg?.databaseUrl, GATEWAY_BLOB_STORE: 'local',
    });
    children.push(gw.child);
    return gw;
  }

  async function post<T = any>(url: string, token: string, body?: unknown): Promise<{ status: number; json: T }> {
    const res = await fetch(url, {
      method: 'POST', body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    return { status: res.status, json: (await res.json()) as T };
  }

  /** Reads the store directly; on PGlite only while no gateway process holds the data folder. */
  async function withStore<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (pg) return fn(pg.db);
    const db = await openDb({ dataDir });
    try { return await fn(db); } finally { await db.close(); }
  }
  const recordOf = (id: string) => withStore(async (db) =>
    (await db.query<TempRow>('SELECT state, deleted_reason, expires_at FROM temp_files WHERE id = $1', [id]))[0]);

  it('leaves no orphan blob, partial upload or record after a restart and the cleanup', async () => {
    const blobs = join(dataDir, 'blobs');
    const first = await start();
    const account = (await post<{ id: string; key: string }>(`${first.url}/admin/accounts`, ADMIN_TOKEN, { balance_usd: '0' })).json;
    const pdf = await readFile(join(import.meta.dirname, '../fixtures/files/sample.pdf'));
    const half = pdf.subarray(0, Math.floor(pdf.length / 2));

    // 1. Authorize, then a PUT that declares every byte, sends half of them and stalls.
    const authorized = await post<Authorization>(`${first.url}/v1/gateway/files/upload-authorizations`, account.key,
      { purpose: 'OCR_INPUT', content_type: 'application/pdf', byte_size: pdf.length });
    expect(authorized.status, JSON.stringify(authorized.json)).toBe(200);
    const a = authorized.json;
    expect(new URL(a.upload_url).origin).toBe(new URL(first.url).origin);
    const put = request(a.upload_url, { method: a.method, headers: { ...a.headers, 'content-length': String(pdf.length) } });
    const putOutcome = new Promise<string>((ok) => {
      put.once('response', (res) => ok(`answered ${res.statusCode}`));
      put.once('error', (error) => ok(`error ${(error as NodeJS.ErrnoException).code ?? error.message}`));
    });
    put.flushHeaders();
    put.write(half);

    // 2. The half arrives: the store writes it to a `.part-` file beside the object's final path.
    const partial = `temp/${account.id}/${a.file_id}`;
    const deadline = Date.now() + 15_000;
    let found: string[] = [];
    for (; Date.now() < deadline; await sleep(50)) {
      found = (await filesUnder(blobs)).filter((f) => f.startsWith(`${partial}.part-`));
      if (found.length === 1 && (await stat(join(blobs, found[0]!))).size === half.length) break;
    }
    expect(found, JSON.stringify(await filesUnder(blobs))).toHaveLength(1);
    expect((await stat(join(blobs, found[0]!))).size).toBe(half.length);

    // 3. kill -9 mid-upload: the client's PUT fails, the partial file and the pending record remain.
    await kill9(first.child);
    expect(await putOutcome).toMatch(/^error /);
    put.destroy();
    expect(await filesUnder(blobs)).toEqual(found);
    const crashed = await recordOf(a.file_id);
    expect(crashed).toMatchObject({ state: 'pending', deleted_reason: null });
    const expiresAt = new Date(crashed!.expires_at).getTime();

    // 4. Restart on the same data. A cleanup before the pending lifetime ends keeps the record.
    const second = await start();
    const cleanup = async () => {
      const run = await post<{ job: string; ran: boolean; result: CleanupReport }>(`${second.url}/admin/jobs/files-cleanup/run`, ADMIN_TOKEN);
      expect([run.status, run.json.job, run.json.ran]).toEqual([200, 'files-cleanup', true]);
      return run.json.result;
    };
    expect(Date.now()).toBeLessThan(expiresAt - 1_000);
    const early = await cleanup();
    expect(early).toMatchObject({ pending_deleted: 0, finalized_deleted: 0, orphan_blobs_removed: 0 });
    expect(await post(`${second.url}/v1/gateway/files/${a.file_id}/finalize`, account.key)).toMatchObject({
      status: 400, json: { error: { code: 'invalid_request', message: expect.stringContaining('Nothing was uploaded') } },
    });

    // 5. Once the pending lifetime has passed (real time: 20 s after the authorization), the cleanup
    //    deletes the record and sweeps the partial (older than the 10 s upload URL lifetime).
    await sleep(Math.max(0, expiresAt - Date.now() + 500));
    const late = await cleanup();
    expect(late).toMatchObject({ pending_deleted: 1, finalized_deleted: 0, orphan_blobs_removed: 0 });
    expect(early.partial_uploads_removed + late.partial_uploads_removed).toBe(1);
    expect(await filesUnder(blobs)).toEqual([]);
    const gone = await post(`${second.url}/v1/gateway/files/${a.file_id}/finalize`, account.key);
    expect([gone.status, gone.json.error.code]).toEqual([404, 'file_expired']);

    // 6. Stop it cleanly and read the store: the record is deleted as expired, none is left live.
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await recordOf(a.file_id)).toMatchObject({ state: 'deleted', deleted_reason: 'expired' });
    const live = await withStore((db) => db.query<{ n: number }>("SELECT count(*)::int AS n FROM temp_files WHERE state <> 'deleted'"));
    expect(live[0]!.n).toBe(0);
  }, 150_000);
});
