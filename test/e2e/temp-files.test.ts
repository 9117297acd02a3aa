/**
 * Temporary files end to end (issue 10 item 2, spec 3 and 4.7): a plain HTTP client authorizes,
 * PUTs with exactly the returned method and headers, and finalizes; then every refusal a user can
 * meet, the signed URL's abuse cases, concurrent finalizes, another account's 404, and the cleanup
 * under a clock the test moves. On both stores, local blob store.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postJson } from '../helpers/native.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/files');
const fixture = (name: string): Promise<Buffer> => readFile(join(FIXTURES, name));

interface Authorization { file_id: string; upload_url: string; method: string; headers: Record<string, string>; upload_expires_at: string }

describe('temporary files', () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await startTestGateway({ clock });
    account = await t.account('0');
  });
  afterAll(async () => { await t?.dispose(); });

  const authorize = async (body: Record<string, unknown>, key = account.key) => postJson(t, '/v1/gateway/files/upload-authorizations', key, body);
  const upload = (a: Authorization, bytes: Buffer, init: { method?: string; headers?: Record<string, string>; url?: string } = {}) =>
    fetch(init.url ?? a.upload_url, { method: init.method ?? a.method, headers: init.headers ?? a.headers, body: new Uint8Array(bytes) });
  const finalize = (id: string, key = account.key) => postJson(t, `/v1/gateway/files/${id}/finalize`, key, undefined);
  async function uploaded(purpose: string, contentType: string, bytes: Buffer): Promise<Authorization> {
    const a = await authorize({ purpose, content_type: contentType, byte_size: bytes.length });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const put = await upload(a.json, bytes);
    expect(put.status, await put.clone().text()).toBe(200);
    return a.json as Authorization;
  }

  it('authorizes, uploads with the returned method and headers, and finalizes at zero balance', async () => {
    const png = await fixture('sample.png');
    const a = await authorize({ purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: png.length });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png' } });
    expect(a.json.file_id).toMatch(/^tfile_[0-9a-f]{24}$/);
    const expires = Date.parse(a.json.upload_expires_at) - clock.now().getTime();
    expect(expires).toBe(600_000);
    expect((await upload(a.json, png)).status).toBe(200);
    const f = await finalize(a.json.file_id);
    expect(f.status, JSON.stringify(f.json)).toBe(200);
    expect(f.json).toEqual({ file_id: a.json.file_id, expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString() });
    // Finalize is idempotent; a consumer resolves it by purpose.
    expect((await finalize(a.json.file_id)).json).toEqual(f.json);
    const record = await t.gw.runtime.files!.temp.resolve(account.id, a.json.file_id, ['VISION_INPUT']);
    expect(await t.gw.runtime.files!.temp.bytes(record)).toEqual(png);
    expect((await t.usage(account.id)).data).toEqual([]);
  });

  it('refuses an unknown purpose, a content type the purpose does not take, and a size over its limit', async () => {
    expect((await authorize({ purpose: 'SELFIES', content_type: 'image/png', byte_size: 10 })).status).toBe(400);
    const type = await authorize({ purpose: 'AUDIO_INPUT', content_type: 'image/png', byte_size: 10 });
    expect([type.status, type.json.error.param]).toEqual([400, 'content_type']);
    const big = await authorize({ purpose: 'MODERATION_INPUT', content_type: 'image/png', byte_size: 4 * 1024 * 1024 + 1 });
    expect([big.status, big.json.error.code]).toEqual([413, 'upload_too_large']);
    expect((await authorize({ purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: 0 })).status).toBe(400);
    expect((await authorize({ purpose: 'VISION_INPUT', content_type: 'image/png' })).json.error.param).toBe('byte_size');
  });

  it('refuses bytes past the declared size while they arrive, and a declared size larger than what came at finalize', async () => {
    const png = await fixture('sample.png');
    const small = await authorize({ purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: png.length - 1 });
    const over = await upload(small.json, png);
    expect([over.status, ((await over.json()) as { error: { code: string } }).error.code]).toEqual([413, 'upload_too_large']);
    const large = await authorize({ purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: png.length + 5 });
    expect((await upload(large.json, png)).status).toBe(200);
    const f = await finalize(large.json.file_id);
    expect([f.status, f.json.error.code]).toEqual([400, 'file_verification_failed']);
    expect(f.json.error.message).toContain(`${png.length} bytes were uploaded; ${png.length + 5} were declared`);
    // Rejected and removed: the id is gone, the blob too.
    expect((await finalize(large.json.file_id)).status).toBe(404);
    expect(await t.gw.runtime.files!.blobs.size(`temp/${account.id}/${large.json.file_id}`)).toBeNull();
  });

  it('rejects and removes a PNG declared as a PDF', async () => {
    const png = await fixture('sample.png');
    const a = await uploaded('OCR_INPUT', 'application/pdf', png);
    const f = await finalize(a.file_id);
    expect([f.status, f.json.error.code]).toEqual([400, 'file_verification_failed']);
    expect(f.json.error.message).toMatch(/PNG/);
    expect(await t.gw.runtime.files!.blobs.size(`temp/${account.id}/${a.file_id}`)).toBeNull();
  });

  it('rejects a zip bomb declared as a DOCX', async () => {
    const bomb = await fixture('bomb.zip');
    const a = await uploaded('DOCUMENT_INPUT', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bomb);
    const f = await finalize(a.file_id);
    expect([f.status, f.json.error.code]).toEqual([400, 'file_verification_failed']);
  });

  it('accepts a real DOCX for DOCUMENT_INPUT', async () => {
    const docx = await fixture('sample.docx');
    const a = await uploaded('DOCUMENT_INPUT', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', docx);
    expect((await finalize(a.file_id)).status).toBe(200);
  });

  it('refuses a signed URL reused, tampered, used with another method or content type, or expired', async () => {
    const png = await fixture('sample.png');
    const a = await uploaded('VISION_INPUT', 'image/png', png);
    const again = await upload(a, png);
    expect(again.status).toBe(409);
    const b = (await authorize({ purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: png.length })).json as Authorization;
    const tampered = new URL(b.upload_url);
    tampered.searchParams.set('signature', `${tampered.searchParams.get('signature')!.slice(0, -2)}AA`);
    expect((await upload(b, png, { url: tampered.toString() })).status).toBe(403);
    const otherFile = new URL(b.upload_url.replace(b.file_id, a.file_id));
    expect((await upload(b, png, { url: otherFile.toString() })).status).toBe(403);
    expect((await fetch(b.upload_url, { method: 'POST', headers: b.headers, body: new Uint8Array(png) })).status).toBe(405);
    expect((await fetch(b.upload_url)).status).toBe(405);
    expect((await upload(b, png, { headers: { 'content-type': 'image/jpeg' } })).status).toBe(400);
    clock.advance(601_000);
    const late = await upload(b, png);
    expect([late.status, ((await late.json()) as { error: { message: string } }).error.message]).toEqual([403, 'This signed URL has expired.']);
  });

  it('gives another account the same 404 as an unknown id, on finalize and on resolve', async () => {
    const other = await t.account('0');
    const png = await fixture('sample.png');
    const a = await uploaded('VISION_INPUT', 'image/png', png);
    const theirs = await finalize(a.file_id, other.key);
    const unknown = await finalize('tfile_000000000000000000000000', other.key);
    expect([theirs.status, theirs.json.error.code]).toEqual([404, 'file_not_found']);
    expect(unknown.json.error.code).toBe('file_not_found');
    await expect(t.gw.runtime.files!.temp.resolve(other.id, a.file_id, ['VISION_INPUT'])).rejects.toMatchObject({ code: 'file_not_found' });
  });

  it('resolves by purpose: pending, wrong purpose and expired are refused', async () => {
    const png = await fixture('sample.png');
    const a = await uploaded('VISION_INPUT', 'image/png', png);
    const temp = t.gw.runtime.files!.temp;
    await expect(temp.resolve(account.id, a.file_id, ['VISION_INPUT'])).rejects.toMatchObject({ code: 'file_not_finalized', status: 400 });
    await finalize(a.file_id);
    await expect(temp.resolve(account.id, a.file_id, ['OCR_INPUT', 'DOCUMENT_INPUT'])).rejects.toMatchObject({ code: 'file_purpose_mismatch', status: 400 });
    clock.advance(86_400_000);
    await expect(temp.resolve(account.id, a.file_id, ['VISION_INPUT'])).rejects.toMatchObject({ code: 'file_expired', status: 404 });
  });

  it('gives a separate read-only service URL for five minutes', async () => {
    const png = await fixture('sample.png');
    const a = await uploaded('VISION_INPUT', 'image/png', png);
    await finalize(a.file_id);
    const temp = t.gw.runtime.files!.temp;
    const url = await temp.readUrl(await temp.resolve(account.id, a.file_id, ['VISION_INPUT']), t.url);
    expect(url).not.toBe(a.upload_url);
    const read = await fetch(url);
    expect([read.status, read.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await read.arrayBuffer())).toEqual(png);
    expect((await fetch(url, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: new Uint8Array(png) })).status).toBe(405);
    // The upload URL does not read, and the read URL's signature does not fit another file.
    expect((await fetch(a.upload_url)).status).toBe(405);
    clock.advance(301_000);
    expect((await fetch(url)).status).toBe(403);
  });

  it('finalizes once under concurrent finalizes', async () => {
    const png = await fixture('sample.png');
    const a = await uploaded('VISION_INPUT', 'image/png', png);
    const answers = await Promise.all(Array.from({ length: 6 }, () => finalize(a.file_id)));
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((x) => x.json.expires_at)).size).toBe(1);
  });

  it('cleans up: pending after 2 hours and finalized after 24, blob first, then the record, on demand through the admin API', async () => {
    const png = await fixture('sample.png');
    const pending = await uploaded('VISION_INPUT', 'image/png', png);
    const done = await uploaded('VISION_INPUT', 'image/png', png);
    await finalize(done.file_id);
    const run = async () => {
      const res = await fetch(`${t.url}/admin/jobs/files-cleanup/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as { job: string; ran: boolean; result: Record<string, number> };
    };
    await run();
    const blobs = t.gw.runtime.files!.blobs;
    expect(await blobs.size(`temp/${account.id}/${pending.file_id}`)).toBe(png.length);
    clock.advance(2 * 3600_000);
    const first = await run();
    expect(first).toMatchObject({ job: 'files-cleanup', ran: true });
    expect(first.result.pending_deleted).toBeGreaterThanOrEqual(1);
    expect(await blobs.size(`temp/${account.id}/${pending.file_id}`)).toBeNull();
    expect(await blobs.size(`temp/${account.id}/${done.file_id}`)).toBe(png.length);
    clock.advance(22 * 3600_000);
    const second = await run();
    expect(second.result.finalized_deleted).toBeGreaterThanOrEqual(1);
    expect(await blobs.size(`temp/${account.id}/${done.file_id}`)).toBeNull();
    expect((await finalize(done.file_id)).json.error.code).toBe('file_expired');
    const states = await t.gw.db.query<{ state: string }>('SELECT DISTINCT state FROM temp_files WHERE account_id = $1', [account.id]);
    expect(states.map((s) => s.state)).toEqual(['deleted']);
    expect(await blobs.list(`temp/${account.id}/`)).toEqual([]);
    const unknown = await fetch(`${t.url}/admin/jobs/no-such-job/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(unknown.status).toBe(404);
  });
});
