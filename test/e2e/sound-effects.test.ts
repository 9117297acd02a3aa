/**
 * POST /v1/audio/sound-effects end to end (issue 11 item 3; spec 4.8, 1, 8): a plain fetch through the
 * gateway to the simulator playing ElevenLabs' `POST /v1/sound-generation`. One MP3 back whose
 * length is the requested duration; billed per generated second in 0.5 s steps (the requested
 * duration is both the reserve and the bill), the settled charge in X-Gateway-Cost-USD. Durations
 * outside 0.5..30 or off the 0.5 grid, a missing duration or prompt, and bad options are 400s with
 * nothing reserved; an upstream fault charges nothing.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { frameCount } from '../../src/sim/elevenlabs.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectBrokenAnswer, expectUntouched, postJson } from '../helpers/native.js';

/** $0.004 per second (providers/elevenlabs.yaml): 2,000,000 nano-USD per half second. */
const NANO_PER_HALF_SECOND = 2_000_000n;

describeStore(`sound effects (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const generate = (key: string, body: unknown) => fetch(`${t.url}/v1/audio/sound-effects`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });

  it('answers an MP3 of the requested length and bills it per half second, at the 0.5 and 30 s edges', async () => {
    const account = await t.account('1');
    let spent = 0n;
    for (const [duration, cost] of [[0.5, '0.002'], [1.5, '0.006'], [30, '0.12']] as const) {
      const res = await generate(account.key, { model: 'eleven_text_to_sound_v2', prompt: 'A wooden door creaks open.', duration_seconds: duration, loop: true, prompt_influence: 0.6 });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('audio/mpeg');
      const data = Buffer.from(await res.arrayBuffer());
      expect([data[0], data[1]! & 0xe0]).toEqual([0xff, 0xe0]);
      expect(data.length).toBe(frameCount(duration) * 417);
      expect(res.headers.get('x-gateway-cost-usd')).toBe(cost);
      expect(res.headers.get('x-gateway-seconds')).toBe(String(duration));
      spent += BigInt(duration * 2) * NANO_PER_HALF_SECOND;
    }
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => [r.kind, r.unit, r.quantity, r.amountNano]).sort((a, b) => Number(a[2]) - Number(b[2]))).toEqual([
      ['sound-effects', 'second', 1n, 2_000_000n], ['sound-effects', 'second', 3n, 6_000_000n], ['sound-effects', 'second', 60n, 120_000_000n],
    ]);
    expect(rows.find((r) => r.quantity === 1n)!.details).toMatchObject({ step: '0.5', quantity: '0.5' });
    // The admin API shows the seconds themselves (the stored quantity counts half-second steps).
    const listed = await (await fetch(`${t.url}/admin/accounts/${account.id}/usage`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as { data: Array<{ quantity: number; unit: string }> };
    expect(listed.data.map((r) => [r.quantity, r.unit]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([[0.5, 'second'], [1.5, 'second'], [30, 'second']]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - spent, heldNano: 0n, openHolds: 0 });
    const last = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { path: string; body: unknown };
    expect(last.path).toBe('/v1/sound-generation');
    expect(last.body).toEqual({ text: 'A wooden door creaks open.', model_id: 'eleven_text_to_sound_v2', duration_seconds: 30, loop: true, prompt_influence: 0.6 });
  });

  it('uses the default sound-effects model when none is named', async () => {
    const account = await t.account('1');
    const res = await generate(account.key, { prompt: 'Rain on a tin roof.', duration_seconds: 2 });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(res.headers.get('x-gateway-cost-usd')).toBe('0.008');
    expect((await t.usage(account.id)).data[0]).toMatchObject({ model: 'eleven_text_to_sound_v2', quantity: 4n, amountNano: 8_000_000n });
  });

  it('refuses bad input with a 400 naming the parameter, reserving and charging nothing', async () => {
    const account = await t.account('1');
    const ok = { prompt: 'Thunder.', duration_seconds: 1 };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ duration_seconds: 30.5 }, 'duration_seconds'], [{ duration_seconds: 0 }, 'duration_seconds'], [{ duration_seconds: 0.25 }, 'duration_seconds'],
      [{ duration_seconds: 1.2 }, 'duration_seconds'], [{ duration_seconds: '2' }, 'duration_seconds'], [{ duration_seconds: undefined }, 'duration_seconds'],
      [{ prompt: '' }, 'prompt'], [{ prompt: undefined }, 'prompt'], [{ loop: 'yes' }, 'loop'], [{ prompt_influence: 1.5 }, 'prompt_influence'],
      [{ prompt_influence: -0.1 }, 'prompt_influence'], [{ output_format: 'pcm_16000' }, 'output_format'],
    ];
    for (const [body, param] of cases) {
      const a = await postJson(t, '/v1/audio/sound-effects', account.key, { ...ok, ...body });
      expect(a.status, JSON.stringify(body)).toBe(400);
      expect(a.json.error.param, JSON.stringify(a.json)).toBe(param);
    }
    const speechModel = await postJson(t, '/v1/audio/sound-effects', account.key, { ...ok, model: 'eleven_multilingual_v2' });
    expect(speechModel.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    await expectUntouched(t, account, 1_000_000_000n);
  });

  it('charges nothing when ElevenLabs fails or the MP3 is cut, and answers 402 when the duration does not fit', async () => {
    const account = await t.account('1');
    const body = { prompt: 'Glass breaking.', duration_seconds: 3 };
    for (const fault of [{ status: 500 }, { status: 503 }, { truncate_after_chunks: 1 }]) {
      await t.fault(fault, 'eleven_text_to_sound_v2');
      const res = await generate(account.key, body);
      // A cut MP3 streams through (its price is known from the request): a 200 whose body breaks off.
      await expectBrokenAnswer(res, JSON.stringify(fault));
      await t.clearFaults();
    }
    await expectUntouched(t, account, 1_000_000_000n);
    const poor = await t.account('0.01');
    const refused = await postJson(t, '/v1/audio/sound-effects', poor.key, body);
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toBe('Insufficient balance: this request needs $0.012 reserved (3 seconds at $0.004 per 1); $0.01 is available. Top up.');
    await expectUntouched(t, poor, 10_000_000n);
    const fits = await generate(poor.key, { ...body, duration_seconds: 2.5 });
    expect(fits.status).toBe(200);
    await fits.arrayBuffer();
    expect(await t.settled(poor.id)).toMatchObject({ balanceNano: 0n, heldNano: 0n });
  });
});
