/**
 * Generated outputs in temporary private storage (spec 4.14, 4.16, 8): stored for the account, served
 * through a signed URL with byte ranges (200 with Accept-Ranges, 206 with Content-Range, 416 past the
 * end), refused once the output lifetime ends, and removed by the cleanup job; never usable as an input.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Outputs } from '../../src/files/outputs.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

let t: TestGateway;
let outputs: Outputs;
const clock = new ManualClock();
const data = randomBytes(10_000);

beforeAll(async () => {
  t = await startTestGateway({ clock });
  outputs = t.gw.runtime.files!.outputs!;
});
afterAll(async () => { await t.dispose(); });

async function store(): Promise<{ id: string; url: string; expiresAt: Date; accountId: string }> {
  const account = await t.account('1');
  const output = await outputs.store({ accountId: account.id, purpose: 'VIDEO_OUTPUT', contentType: 'video/mp4', data, origin: t.url });
  return { ...output, accountId: account.id };
}

describe('stored outputs', () => {
  it('serves the whole file with Accept-Ranges, and one range as 206', async () => {
    const output = await store();
    expect(output.url.startsWith(`${t.url}/v1/gateway/files/blobs/${output.id}?`)).toBe(true);
    expect(output.expiresAt.getTime() - clock.now().getTime()).toBe(86_400_000);
    const whole = await fetch(output.url);
    expect([whole.status, whole.headers.get('accept-ranges'), whole.headers.get('content-type'), whole.headers.get('content-length')]).toEqual([200, 'bytes', 'video/mp4', '10000']);
    expect(Buffer.from(await whole.arrayBuffer()).equals(data)).toBe(true);

    const part = await fetch(output.url, { headers: { range: 'bytes=100-199' } });
    expect([part.status, part.headers.get('content-range'), part.headers.get('content-length')]).toEqual([206, 'bytes 100-199/10000', '100']);
    expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(100, 200))).toBe(true);

    const tail = await fetch(output.url, { headers: { range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(data.subarray(9990))).toBe(true);

    const past = await fetch(output.url, { headers: { range: 'bytes=10000-' } });
    expect([past.status, past.headers.get('content-range')]).toEqual([416, 'bytes */10000']);
  });

  it('is refused once its lifetime ends, and the cleanup removes it', async () => {
    const output = await store();
    clock.advance(86_400_000);
    const late = await fetch(output.url);
    expect(late.status).toBe(403);
    await late.arrayBuffer();
    const run = await fetch(`${t.url}/admin/jobs/files-cleanup/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(run.status).toBe(200);
    await run.arrayBuffer();
    const [row] = await t.gw.db.query<{ state: string }>('SELECT state FROM temp_files WHERE id = $1', [output.id]);
    expect(row?.state).toBe('deleted');
    expect(await t.gw.runtime.files!.blobs.size(`temp/${output.accountId}/${output.id}`)).toBeNull();
  });

  it('cannot be passed back as an input file', async () => {
    const account = await t.account('1');
    const output = await outputs.store({ accountId: account.id, purpose: 'IMAGE_OUTPUT', contentType: 'image/png', data, origin: t.url });
    await expect(t.gw.runtime.files!.temp.resolve(account.id, output.id, ['IMAGE_REFERENCE'])).rejects.toMatchObject({ code: 'file_purpose_mismatch' });
  });
});
