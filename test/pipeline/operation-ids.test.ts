/**
 * X-Gateway-Operation-ID on images and video (issue 11 item 6; spec 4.14, 4.16, 7), end to end through
 * the gateway: claimed before anything is reserved; a reuse after a completed operation answers the
 * same images or the same video job again and never charges twice; one still running is waited for and
 * answered the same way (issue 31 item 9), as is one whose client went away after dispatch; one that
 * failed or was refused before dispatch runs again; and the planned mode (operation_ids.required)
 * requires an id and answers 409 for one already submitted.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const IMAGE = { model: 'gpt-image-1', prompt: 'A lantern in the fog.', quality: 'low', size: '1024x1024' };

function post(t: TestGateway, path: string, key: string, body: unknown, operationId?: string) {
  return fetch(`${t.url}${path}`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(operationId ? { 'x-gateway-operation-id': operationId } : {}) },
  });
}

async function simRequests(t: TestGateway): Promise<number> {
  return ((await (await fetch(`${t.sim.url}/__sim/stats`)).json()) as { requests: number }).requests;
}

describe('operation ids, optional mode', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  it('answers the same images again for a reused id, charging once', async () => {
    const account = await t.account('5');
    const first = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-image-1');
    expect(first.status).toBe(200);
    const body = await first.json();
    const balance = (await t.settled(account.id))!.balanceNano;
    expect(balance).toBeLessThan(5_000_000_000n);

    const again = await post(t, '/v1/images/generations', account.key, { ...IMAGE, prompt: 'Anything else' }, 'op-image-1');
    expect([again.status, again.headers.get('x-gateway-operation-replayed'), again.headers.get('x-gateway-cost-usd')]).toEqual([200, 'true', '0']);
    expect(await again.json()).toEqual(body);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: balance, heldNano: 0n });
    expect((await t.usage(account.id)).data).toHaveLength(1);
  });

  it('waits for an operation that is still running and answers its result: one vendor call, one charge', async () => {
    const account = await t.account('5');
    await t.fault({ latency_ms: 1_000, times: 1 }, 'gpt-image-1');
    const before = await simRequests(t);
    const slow = post(t, '/v1/images/generations', account.key, IMAGE, 'op-busy');
    // Once the simulator has the request, the id was claimed (claims come before dispatch).
    while (await simRequests(t) === before) await new Promise((r) => setTimeout(r, 20));
    const again = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-busy');
    const first = await slow;
    expect(first.status).toBe(200);
    expect([again.status, again.headers.get('x-gateway-operation-replayed'), again.headers.get('x-gateway-cost-usd')]).toEqual([200, 'true', '0']);
    expect(await again.json()).toEqual(await first.json());
    expect(await simRequests(t)).toBe(before + 1);
    expect((await t.usage(account.id)).data).toHaveLength(1);
  });

  it('finishes, bills and keeps an operation whose client went away after dispatch; its retry gets the result', async () => {
    const account = await t.account('5');
    await t.fault({ latency_ms: 800, times: 1 }, 'gpt-image-1');
    const before = await simRequests(t);
    const controller = new AbortController();
    const gone = fetch(`${t.url}/v1/images/generations`, {
      method: 'POST', body: JSON.stringify(IMAGE), signal: controller.signal,
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'x-gateway-operation-id': 'op-gone' },
    }).catch((error: unknown) => error);
    while (await simRequests(t) === before) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(await gone).toBeInstanceOf(Error);

    const retry = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-gone');
    expect([retry.status, retry.headers.get('x-gateway-operation-replayed')]).toEqual([200, 'true']);
    expect((await retry.json()).data).toHaveLength(1);
    expect(await simRequests(t)).toBe(before + 1);
    const rows = (await t.usage(account.id)).data;
    expect(rows).toHaveLength(1);
    expect(await t.settled(account.id)).toMatchObject({ heldNano: 0n });
  });

  it('lets an operation whose upstream failed run again', async () => {
    const account = await t.account('5');
    // Both attempts of the request: the first and its one retry on the same deployment (issue 29).
    await t.fault({ status: 500, times: 2 }, 'gpt-image-1');
    const failed = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-retry');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await failed.arrayBuffer();
    const retried = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-retry');
    expect([retried.status, retried.headers.get('x-gateway-operation-replayed')]).toEqual([200, null]);
    await retried.arrayBuffer();
    expect((await t.usage(account.id)).data).toHaveLength(1);
  });

  it('gives an id back when the request was refused before dispatch (402), so it works after a top-up', async () => {
    const account = await t.account('0');
    const refused = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-topup');
    expect(refused.status).toBe(402);
    await refused.arrayBuffer();
    await t.gw.runtime.ledger.topUp(account.id, 5_000_000_000n);
    const paid = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-topup');
    expect(paid.status).toBe(200);
    await paid.arrayBuffer();
  });

  it('answers the same video job for a reused id, holding once; an id is not reused across kinds', async () => {
    const account = await t.account('5');
    const first = await (await post(t, '/v1/videos/generations', account.key, { model: 'sora-2', prompt: 'Waves.', seconds: 4 }, 'op-video')).json();
    const again = await post(t, '/v1/videos/generations', account.key, { model: 'sora-2', prompt: 'Waves.', seconds: 4 }, 'op-video');
    expect([again.status, again.headers.get('x-gateway-operation-replayed')]).toEqual([200, 'true']);
    expect((await again.json()).id).toBe(first.id);
    expect(await t.settled(account.id)).toMatchObject({ heldNano: 400_000_000n, openHolds: 1 });
    const crossed = await post(t, '/v1/images/generations', account.key, IMAGE, 'op-video');
    expect([crossed.status, (await crossed.json()).error.code]).toEqual([409, 'operation_id_reused']);
  });

  it('refuses a malformed id before anything is reserved', async () => {
    const account = await t.account('5');
    const res = await post(t, '/v1/images/generations', account.key, IMAGE, 'has space');
    expect([res.status, (await res.json()).error.param]).toEqual([400, 'x-gateway-operation-id']);
  });
});

describe('operation ids, required mode', () => {
  let t: TestGateway;
  let copy: ConfigCopy;
  beforeAll(async () => {
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.operation_ids = { required: true }; });
    t = await startTestGateway({ configFile: copy.configFile });
  });
  afterAll(async () => { await t?.dispose(); await rm(copy.dir, { recursive: true, force: true }); });

  it('requires an id and answers 409 for one already submitted', async () => {
    const account = await t.account('5');
    const missing = await post(t, '/v1/images/generations', account.key, IMAGE);
    expect([missing.status, (await missing.json()).error.code]).toEqual([400, 'operation_id_required']);
    const first = await post(t, '/v1/videos/generations', account.key, { model: 'sora-2', prompt: 'Rain.' }, 'op-required');
    const job = await first.json();
    expect(first.status).toBe(200);
    const again = await post(t, '/v1/videos/generations', account.key, { model: 'sora-2', prompt: 'Rain.' }, 'op-required');
    const error = (await again.json()).error;
    expect([again.status, error.code]).toEqual([409, 'operation_id_reused']);
    expect(error.message).toContain(job.id);
    expect(await t.settled(account.id)).toMatchObject({ heldNano: 400_000_000n, openHolds: 1 });
  });
});
