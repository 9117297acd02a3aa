/**
 * Video jobs end to end (issue 11 item 5; spec 4.16, 1, 3): plain HTTP (curl-like fetch) through the
 * gateway to the simulator playing OpenAI's videos API. A job is recorded per account and owns the
 * request's hold; the poller (run through POST /admin/jobs/video-jobs/run, the clock moved by hand)
 * settles the seconds the finished MP4 measures, or releases the hold when the job fails or passes its
 * deadline. The finished job names a video URL served by the gateway with byte ranges. Remixes are
 * their own paid jobs; the exclusion rules of 4.16 and the reference image's size are checked before
 * anything is reserved.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SIM_VIDEO_READY_MS } from '../../src/sim/openai-videos.js';
import { anyVideoJobDue } from '../../src/videos/records.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { expectUntouched, postJson } from '../helpers/native.js';

/** sora-2: $0.10 per second (providers/openai.yaml). */
const NANO_PER_SECOND = 100_000_000n;
const FIRST_POLL_MS = 2_000;

describeStore(`video jobs (${storeKind})`, () => {
  let t: TestGateway;
  const clock = new ManualClock();
  beforeAll(async () => { t = await startTestGateway({ clock }); });
  afterAll(async () => { await t?.dispose(); });

  const submit = (key: string, body: unknown) => postJson(t, '/v1/videos/generations', key, body);
  const read = async (key: string, id: string) => {
    const res = await fetch(`${t.url}/v1/videos/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, headers: res.headers, json: await res.json() as Record<string, any> };
  };
  const poll = async () => {
    const res = await fetch(`${t.url}/admin/jobs/video-jobs/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    return res.json();
  };
  /** Lets the simulated job finish, moves the clock past its next poll and polls until it ends. */
  const finish = async (key: string, id: string) => {
    await new Promise((r) => setTimeout(r, SIM_VIDEO_READY_MS + 50));
    for (let i = 0; i < 5; i++) {
      clock.advance(FIRST_POLL_MS + 5_000);
      await poll();
      const job = await read(key, id);
      if (job.json.status === 'completed' || job.json.status === 'failed') return job;
    }
    throw new Error(`job ${id} did not end`);
  };

  it('records a job holding its seconds, then bills the seconds produced and hosts the video with byte ranges', async () => {
    const account = await t.account('5');
    const started = await submit(account.key, { model: 'sora-2', prompt: 'A red kite over the sea.', seconds: 8 });
    expect(started.status).toBe(200);
    expect(started.json).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', seconds: 8, size: '1280x720', video_url: null, usage: null });
    expect(started.json.id).toMatch(/^video_gw_[0-9a-f]{24}$/);
    expect(started.headers.get('x-gateway-cost-usd')).toBe('0');
    // The job owns the hold: 8 s at $0.10 reserved, nothing charged yet.
    expect(await t.settled(account.id)).toMatchObject({ heldNano: 8n * NANO_PER_SECOND, openHolds: 1 });
    // The poller's tick reads this first (skipping its transaction and lock): due at its first poll, not before.
    const later = (ms: number) => new Date(clock.now().getTime() + ms);
    expect(await anyVideoJobDue(t.gw.db, clock.now())).toBe(false);
    expect(await anyVideoJobDue(t.gw.db, later(FIRST_POLL_MS))).toBe(true);

    const done = await finish(account.key, started.json.id);
    expect(await anyVideoJobDue(t.gw.db, later(3_600_000))).toBe(false);
    expect(done.json).toMatchObject({ status: 'completed', progress: 100, usage: { seconds: 8, cost_usd: '0.8' } });
    expect(done.headers.get('x-gateway-cost-usd')).toBe('0.8');
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 5_000_000_000n - 8n * NANO_PER_SECOND, heldNano: 0n, openHolds: 0 });
    const usage = (await t.usage(account.id)).data;
    expect(usage.map((r) => [r.kind, r.unit, r.quantity, r.amountNano])).toEqual([['videos-generations', 'second', 8n, 8n * NANO_PER_SECOND]]);

    const whole = await fetch(done.json.video_url);
    expect([whole.status, whole.headers.get('content-type'), whole.headers.get('accept-ranges')]).toEqual([200, 'video/mp4', 'bytes']);
    const bytes = Buffer.from(await whole.arrayBuffer());
    const part = await fetch(done.json.video_url, { headers: { range: 'bytes=0-7' } });
    expect([part.status, part.headers.get('content-range')]).toEqual([206, `bytes 0-7/${bytes.length}`]);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(0, 8))).toBe(true);
  });

  it('bills the seconds actually produced when the video is shorter than asked', async () => {
    const account = await t.account('5');
    const started = await submit(account.key, { model: 'sora-2', prompt: 'A short one [sim:short]', seconds: 8 });
    const done = await finish(account.key, started.json.id);
    // 6.5 s produced: 7 whole seconds billed, the rest of the 8 s hold given back.
    expect(done.json.usage).toEqual({ seconds: 7, cost_usd: '0.7' });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 5_000_000_000n - 7n * NANO_PER_SECOND, heldNano: 0n });
  });

  it('charges nothing for a failed job or one past its deadline, and releases the hold', async () => {
    const account = await t.account('5');
    const failed = await submit(account.key, { model: 'sora-2', prompt: 'Will fail [sim:fail]' });
    const ended = await finish(account.key, failed.json.id);
    expect(ended.json).toMatchObject({ status: 'failed', usage: null, video_url: null, error: { code: 'video_generation_failed' } });
    await expectUntouched(t, account, 5_000_000_000n);

    const slow = await submit(account.key, { model: 'sora-2', prompt: 'Never ends [sim:slow]', seconds: 4 });
    clock.advance(3_600_000);
    await poll();
    const late = await read(account.key, slow.json.id);
    expect(late.json).toMatchObject({ status: 'failed', error: { code: 'video_job_timeout' } });
    await expectUntouched(t, account, 5_000_000_000n);
  });

  it('remixes a completed job of the account as its own paid job inheriting size and duration', async () => {
    const account = await t.account('5');
    const source = await submit(account.key, { model: 'sora-2', prompt: 'A boat.', seconds: 4, size: '720x1280' });
    await finish(account.key, source.json.id);
    const remix = await submit(account.key, { model: 'sora-2', prompt: 'The same boat at night.', remix_video_id: source.json.id });
    expect(remix.status).toBe(200);
    expect(remix.json).toMatchObject({ seconds: 4, size: '720x1280', remixed_from_video_id: source.json.id });
    const done = await finish(account.key, remix.json.id);
    expect(done.json.usage).toEqual({ seconds: 4, cost_usd: '0.4' });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 5_000_000_000n - 8n * NANO_PER_SECOND, heldNano: 0n });

    for (const field of ['size', 'seconds', 'image', 'file_id'] as const) {
      const value = { size: '1280x720', seconds: 4, image: 'data:image/png;base64,AA==', file_id: 'tfile_000000000000000000000000' }[field];
      const refused = await submit(account.key, { model: 'sora-2', prompt: 'x', remix_video_id: source.json.id, [field]: value });
      expect([refused.status, refused.json.error.param]).toEqual([400, field]);
    }
    const other = await t.account('5');
    const foreign = await submit(other.key, { model: 'sora-2', prompt: 'x', remix_video_id: source.json.id });
    expect([foreign.status, foreign.json.error.param]).toEqual([404, 'remix_video_id']);
    expect((await read(other.key, source.json.id)).status).toBe(404);
    await expectUntouched(t, other, 5_000_000_000n);
  });

  it('takes a reference image of exactly the requested size, and refuses any other before reserving', async () => {
    const account = await t.account('5');
    const image = `data:image/png;base64,${png(1280, 720).toString('base64')}`;
    const accepted = await submit(account.key, { model: 'sora-2', prompt: 'From this frame.', image });
    expect(accepted.status).toBe(200);
    const sent = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { body: { input_reference: { image_url: string } } };
    expect(sent.body.input_reference.image_url).toBe(image);
    await finish(account.key, accepted.json.id);

    const fresh = await t.account('5');
    const wrongSize = await submit(fresh.key, { model: 'sora-2', prompt: 'x', image: `data:image/png;base64,${png(720, 1280).toString('base64')}` });
    expect([wrongSize.status, wrongSize.json.error.param]).toEqual([400, 'image']);
    expect(wrongSize.json.error.message).toContain('1280x720');
    const notImage = await submit(fresh.key, { model: 'sora-2', prompt: 'x', image: `data:image/png;base64,${Buffer.from('%PDF-1.4 not an image').toString('base64')}` });
    expect([notImage.status, notImage.json.error.param]).toEqual([400, 'image']);
    const badSize = await submit(fresh.key, { model: 'sora-2', prompt: 'x', size: '1024x1792' });
    expect([badSize.status, badSize.json.error.code]).toEqual([400, 'unsupported_parameter']);
    const badSeconds = await submit(fresh.key, { model: 'sora-2', prompt: 'x', seconds: 5 });
    expect(badSeconds.status).toBe(400);
    await expectUntouched(t, fresh, 5_000_000_000n);
  });

  it('refuses a job the balance cannot hold (402) and another account cannot read a job', async () => {
    const poor = await t.account('0.5');
    const refused = await submit(poor.key, { model: 'sora-2', prompt: 'Too long.', seconds: 8 });
    expect(refused.status).toBe(402);
    await expectUntouched(t, poor, 500_000_000n);
    expect((await read(poor.key, 'video_gw_000000000000000000000000')).status).toBe(404);
  });
});
