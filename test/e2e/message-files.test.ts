/**
 * Messages-format files end to end (issue 10 item 3, spec 4.5, 3, 8): the official SDKs (current and
 * 0.x) upload, list, retrieve, delete and try to download through the gateway, which stores the
 * bytes at the simulated vendor's Files API under its own file_gw_ ids; another account's id is 404;
 * the quota edges (20th and 21st file, 100 MiB exactly and one byte over); an upload whose answer is
 * lost keeps its reservation until expiry and is not retried; expiry releases the vendor's copy.
 */
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import AnthropicV0 from 'anthropic-sdk-v0';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const MiB = 1024 * 1024;

describe('messages-format files', () => {
  let t: TestGateway;
  const clock = new ManualClock();
  const client = (key: string) => new Anthropic({ apiKey: key, baseURL: t.url, maxRetries: 0 });
  const upload = async (key: string, bytes: Buffer, name = 'notes.txt', type = 'text/plain') =>
    client(key).files.upload({ file: await toFile(bytes, name, { type }) });
  const vendorFiles = async (): Promise<number> => {
    const res = await fetch(`${t.sim.url}/v1/files?limit=1000`, { headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14', 'x-api-key': 'sim' } });
    return ((await res.json()) as { data: unknown[] }).data.length;
  };

  beforeAll(async () => { t = await startTestGateway({ clock, log: (m, f) => { if (process.env.DEBUG_GW) console.error(m, f); } }); });
  afterAll(async () => { await t?.dispose(); });

  it('uploads, lists, retrieves and deletes with the current SDK; uploads cannot be downloaded; all free', async () => {
    const account = await t.account('0');
    const sdk = client(account.key);
    const meta = await sdk.files.upload({ file: await toFile(Buffer.from('hello files'), 'hello.txt', { type: 'text/plain' }) });
    expect(meta).toMatchObject({ type: 'file', filename: 'hello.txt', mime_type: 'text/plain', size_bytes: 11, downloadable: false });
    expect(meta.id).toMatch(/^file_gw_[0-9a-f]{24}$/);
    expect(Date.parse(meta.expires_at!) - Date.parse(meta.created_at)).toBe(86_400_000);
    expect(await sdk.files.retrieveMetadata(meta.id)).toEqual(meta);
    const listed = [];
    for await (const file of sdk.files.list({ limit: 1 })) listed.push(file.id);
    expect(listed).toEqual([meta.id]);
    await expect(sdk.files.download(meta.id)).rejects.toMatchObject({ status: 400 });
    expect(await sdk.files.delete(meta.id)).toEqual({ id: meta.id, type: 'file_deleted' });
    expect(await sdk.files.delete(meta.id)).toEqual({ id: meta.id, type: 'file_deleted' });
    await expect(sdk.files.retrieveMetadata(meta.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    expect((await t.usage(account.id)).data).toEqual([]);
  });

  it('pages with page / next_page and works with the 0.x SDK (x-api-key, beta files namespace)', async () => {
    const account = await t.account('0');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(account.key, Buffer.from(`file ${i}`))).id);
    const seen: string[] = [];
    for await (const file of client(account.key).files.list({ limit: 2 })) seen.push(file.id);
    expect(seen.sort()).toEqual([...ids].sort());
    const v0 = new AnthropicV0({ apiKey: account.key, baseURL: t.url, maxRetries: 0 });
    const meta = await v0.beta.files.upload({ file: await toFile(Buffer.from('from v0'), 'v0.txt', { type: 'text/plain' }) });
    expect((await v0.beta.files.retrieveMetadata(meta.id)).filename).toBe('v0.txt');
    await v0.beta.files.delete(meta.id);
  });

  it('gives another account 404 on metadata, delete and download', async () => {
    const owner = await t.account('0');
    const other = await t.account('0');
    const meta = await upload(owner.key, Buffer.from('mine'));
    const theirs = client(other.key);
    await expect(theirs.files.retrieveMetadata(meta.id)).rejects.toMatchObject({ status: 404 });
    await expect(theirs.files.delete(meta.id)).rejects.toMatchObject({ status: 404 });
    await expect(theirs.files.download(meta.id)).rejects.toMatchObject({ status: 404 });
    expect((await client(owner.key).files.retrieveMetadata(meta.id)).id).toBe(meta.id);
  });

  it('refuses the 21st file and a byte past 100 MiB', async () => {
    const many = await t.account('0');
    for (let i = 0; i < 20; i++) await upload(many.key, Buffer.from(`n${i}`));
    await expect(upload(many.key, Buffer.from('one more'))).rejects.toMatchObject({ status: 400, error: { error: { code: 'file_quota_exceeded' } } });
    const big = await t.account('0');
    for (let i = 0; i < 5; i++) await upload(big.key, Buffer.alloc(20 * MiB, i), `part${i}.bin`, 'application/octet-stream');
    await expect(upload(big.key, Buffer.from('x'))).rejects.toMatchObject({ status: 400, error: { error: { code: 'file_quota_exceeded' } } });
    // A deleted file frees its share at once.
    const [first] = (await client(big.key).files.list({ limit: 1 })).data;
    await client(big.key).files.delete(first!.id);
    expect((await upload(big.key, Buffer.from('x'))).size_bytes).toBe(1);
  });

  it('refuses an upload over 20 MiB and an expires_in_seconds outside 1 to 24 hours', async () => {
    const account = await t.account('0');
    await expect(upload(account.key, Buffer.alloc(20 * MiB + 1))).rejects.toMatchObject({ status: 413 });
    const form = new FormData();
    form.append('file', new Blob(['short']), 'a.txt');
    form.append('expires_in_seconds', '60');
    const res = await fetch(`${t.url}/v1/files`, { method: 'POST', headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' }, body: form });
    expect(res.status).toBe(400);
    form.set('expires_in_seconds', '3600');
    const ok = await fetch(`${t.url}/v1/files`, { method: 'POST', headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' }, body: form });
    const meta = (await ok.json()) as { created_at: string; expires_at: string };
    expect(Date.parse(meta.expires_at) - Date.parse(meta.created_at)).toBe(3_600_000);
  });

  it('keeps the reservation of an upload whose answer was lost, never retries it, and frees it at expiry', async () => {
    const account = await t.account('0');
    for (let i = 0; i < 19; i++) await upload(account.key, Buffer.from(`k${i}`));
    await t.fault({ truncate_after_chunks: 1, times: 1 }, 'anthropic-files');
    const before = t.sim.requests;
    await expect(upload(account.key, Buffer.from('lost'))).rejects.toMatchObject({ status: 502, headers: expect.anything() });
    expect(t.sim.requests - before).toBeLessThanOrEqual(1);
    const rows = await t.gw.db.query<{ state: string }>("SELECT state FROM message_files WHERE account_id = $1 AND state = 'uncertain'", [account.id]);
    expect(rows).toHaveLength(1);
    // The uncertain upload still counts: the 20th slot is taken.
    await expect(upload(account.key, Buffer.from('x'))).rejects.toMatchObject({ error: { error: { code: 'file_quota_exceeded' } } });
    const vendorBefore = await vendorFiles();
    clock.advance(86_400_000);
    const run = await fetch(`${t.url}/admin/jobs/files-cleanup/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const report = (await run.json()) as { result: { message_files_expired: number; vendor_copies_released: number } };
    expect(report.result.message_files_expired).toBeGreaterThanOrEqual(20);
    expect(await vendorFiles()).toBeLessThan(vendorBefore);
    expect((await upload(account.key, Buffer.from('fresh'))).filename).toBe('notes.txt');
  });
});
