/**
 * Temporary files on the S3 blob store (issue 10 item 2), end to end against s3rver on loopback: the
 * gateway hands out presigned PUTs straight to the bucket, a plain HTTP client uploads with exactly
 * the returned method and headers, and finalize verifies what the bucket holds (size and sniffed
 * type), removing a rejected object from the bucket. The files-cleanup job, under a clock the test
 * moves, deletes expired and orphan objects from the bucket and marks the records deleted.
 *
 * s3rver never checks V4 signatures (AWS does: another content type or length is 403
 * SignatureDoesNotMatch), so here a wrong-size upload reaches the bucket and finalize's size check is
 * what catches it. On both stores (pglite and postgres projects).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { S3BlobStore } from '../../src/files/blob/s3.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postJson } from '../helpers/native.js';
import { startS3rver, type TestS3 } from '../helpers/s3rver.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/files');
const fixture = (name: string): Promise<Buffer> => readFile(join(FIXTURES, name));
const HOUR = 3600_000;

interface Authorization { file_id: string; upload_url: string; method: string; headers: Record<string, string>; upload_expires_at: string }

describe('temporary files on the S3 blob store (s3rver)', () => {
  let s3: TestS3;
  let bucket: S3BlobStore;
  let copy: ConfigCopy;
  let t: TestGateway;
  let account: { id: string; key: string };
  const clock = new ManualClock();

  beforeAll(async () => {
    s3 = await startS3rver();
    bucket = s3.store();
    // The hourly cleanup would also run on its own if the test crossed the hour: only the admin API runs it here.
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.files.cleanup_schedule = '0 0 0 1 1 *'; });
    t = await startTestGateway({ env: s3.gatewayEnv, clock, configFile: copy.configFile });
    account = await t.account('0');
  });
  afterAll(async () => {
    await t?.dispose();
    await bucket?.close();
    await s3?.stop();
    if (copy) await rm(copy.dir, { recursive: true, force: true });
  });

  const keyOf = (id: string): string => `temp/${account.id}/${id}`;
  const authorize = async (body: Record<string, unknown>): Promise<Authorization> => {
    const a = await postJson(t, '/v1/gateway/files/upload-authorizations', account.key, body);
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    return a.json as Authorization;
  };
  /** The client's PUT: exactly the returned URL, method and headers (fetch sets content-length from the body). */
  const upload = (a: Authorization, bytes: Buffer) => fetch(a.upload_url, { method: a.method, headers: a.headers, body: new Uint8Array(bytes) });
  const finalize = (id: string) => postJson(t, `/v1/gateway/files/${id}/finalize`, account.key, undefined);
  const record = async (id: string) =>
    (await t.gw.db.query<{ state: string; deleted_reason: string | null }>('SELECT state, deleted_reason FROM temp_files WHERE id = $1', [id]))[0];
  async function uploaded(purpose: string, contentType: string, bytes: Buffer, byteSize = bytes.length): Promise<Authorization> {
    const a = await authorize({ purpose, content_type: contentType, byte_size: byteSize });
    const put = await upload(a, bytes);
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await bucket.size(keyOf(a.file_id))).toBe(bytes.length);
    return a;
  }

  it('authorize -> PUT straight to the bucket -> finalize, with a PDF for OCR_INPUT', async () => {
    const pdf = await fixture('sample.pdf');
    const a = await authorize({ purpose: 'OCR_INPUT', content_type: 'application/pdf', byte_size: pdf.length });
    expect(a).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/pdf' } });
    expect(Date.parse(a.upload_expires_at) - clock.now().getTime()).toBe(600_000);
    // The URL is the bucket's presigned PUT, not the gateway's own upload route.
    const url = new URL(a.upload_url);
    expect(url.origin).toBe(s3.endpoint);
    expect(url.origin).not.toBe(new URL(t.url).origin);
    expect(url.pathname).toBe(`/${s3.bucket}/${keyOf(a.file_id)}`);
    expect(url.searchParams.get('X-Amz-SignedHeaders')!.split(';').sort()).toEqual(['content-length', 'content-type', 'host']);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);

    const put = await upload(a, pdf);
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await buffer((await bucket.read(keyOf(a.file_id)))!)).toEqual(pdf);
    expect(await record(a.file_id)).toEqual({ state: 'pending', deleted_reason: null });

    const f = await finalize(a.file_id);
    expect(f.status, JSON.stringify(f.json)).toBe(200);
    expect(f.json).toEqual({ file_id: a.file_id, expires_at: new Date(clock.now().getTime() + 24 * HOUR).toISOString() });
    expect(await record(a.file_id)).toEqual({ state: 'finalized', deleted_reason: null });
    // A consumer resolves it by purpose and reads the bucket's bytes.
    const temp = t.gw.runtime.files!.temp;
    expect(await temp.bytes(await temp.resolve(account.id, a.file_id, ['OCR_INPUT']))).toEqual(pdf);
  });

  it('rejects a PNG declared as application/pdf at finalize and removes the object from the bucket', async () => {
    const png = await fixture('sample.png');
    const a = await uploaded('OCR_INPUT', 'application/pdf', png);
    const f = await finalize(a.file_id);
    expect([f.status, f.json.error.code]).toEqual([400, 'file_verification_failed']);
    expect(f.json.error.message).toMatch(/PNG/);
    expect(await bucket.size(keyOf(a.file_id))).toBeNull();
    expect(await record(a.file_id)).toEqual({ state: 'deleted', deleted_reason: 'verification_failed' });
    expect((await finalize(a.file_id)).json.error.code).toBe('file_expired');
  });

  it('rejects bytes of another size at finalize (s3rver takes them: the signed content-length is not checked) and removes them', async () => {
    const pdf = await fixture('sample.pdf');
    const longer = Buffer.concat([pdf, Buffer.from('\n% trailing bytes\n')]);
    const shorter = pdf.subarray(0, pdf.length - 100);
    for (const body of [longer, shorter]) {
      // AWS S3 would answer this PUT 403 SignatureDoesNotMatch; s3rver stores it.
      const a = await uploaded('OCR_INPUT', 'application/pdf', body, pdf.length);
      const f = await finalize(a.file_id);
      expect([f.status, f.json.error.code]).toEqual([400, 'file_verification_failed']);
      expect(f.json.error.message).toContain(`${body.length} bytes were uploaded; ${pdf.length} were declared`);
      expect(await bucket.size(keyOf(a.file_id))).toBeNull();
      expect(await record(a.file_id)).toEqual({ state: 'deleted', deleted_reason: 'verification_failed' });
    }
  });

  it('cleans up the bucket: pending after 2 hours, finalized after 24, orphan objects at once; records marked deleted', async () => {
    const pdf = await fixture('sample.pdf');
    const pending = await uploaded('OCR_INPUT', 'application/pdf', pdf);
    const done = await uploaded('OCR_INPUT', 'application/pdf', pdf);
    expect((await finalize(done.file_id)).status).toBe(200);
    // An object with no record (what a crash between the steps would leave).
    const orphan = keyOf('tfile_0123456789abcdef01234567');
    await bucket.write(orphan, Readable.from([pdf]), { maxBytes: pdf.length });
    const run = async (): Promise<Record<string, number>> => {
      const res = await fetch(`${t.url}/admin/jobs/files-cleanup/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const body = (await res.json()) as { job: string; ran: boolean; result: Record<string, number> };
      expect([res.status, body.job, body.ran]).toEqual([200, 'files-cleanup', true]);
      return body.result;
    };

    const now = await run();
    expect(now).toMatchObject({ pending_deleted: 0, finalized_deleted: 0, orphan_blobs_removed: 1, partial_uploads_removed: 0 });
    expect(await bucket.size(orphan)).toBeNull();
    expect(await bucket.size(keyOf(pending.file_id))).toBe(pdf.length);

    clock.advance(2 * HOUR);
    expect(await run()).toMatchObject({ pending_deleted: 1, finalized_deleted: 0, orphan_blobs_removed: 0 });
    expect(await bucket.size(keyOf(pending.file_id))).toBeNull();
    expect(await record(pending.file_id)).toEqual({ state: 'deleted', deleted_reason: 'expired' });
    expect(await bucket.size(keyOf(done.file_id))).toBe(pdf.length);
    expect(await record(done.file_id)).toMatchObject({ state: 'finalized' });

    clock.advance(22 * HOUR);
    // This one and the first test's finalized file.
    expect(await run()).toMatchObject({ pending_deleted: 0, finalized_deleted: 2, orphan_blobs_removed: 0 });
    expect(await bucket.size(keyOf(done.file_id))).toBeNull();
    expect(await record(done.file_id)).toEqual({ state: 'deleted', deleted_reason: 'expired' });
    expect(await bucket.list('temp/')).toEqual([]);
    const states = await t.gw.db.query<{ state: string }>('SELECT DISTINCT state FROM temp_files WHERE account_id = $1', [account.id]);
    expect(states.map((s) => s.state)).toEqual(['deleted']);
    expect(await run()).toMatchObject({ pending_deleted: 0, finalized_deleted: 0, orphan_blobs_removed: 0 });
  });
});
