/**
 * Admission runs one step in a fixed order (issue 9 point 5): the operation-ID claim, then the limits,
 * then the reserve. A replay of a completed operation is answered by the claim, so it never counts
 * against the limits; an id refused by the limits (429) is given back and runs once they allow it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../../helpers/gateway.js';

const IMAGE = { model: 'gpt-image-1', prompt: 'A lantern in the fog.', quality: 'low', size: '1024x1024' };

function post(t: TestGateway, key: string, operationId: string): Promise<Response> {
  return fetch(`${t.url}/v1/images/generations`, {
    method: 'POST', body: JSON.stringify(IMAGE),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gateway-operation-id': operationId },
  });
}

async function limit(t: TestGateway, accountId: string, limits: Record<string, number | null>): Promise<void> {
  const res = await fetch(`${t.url}/admin/accounts/${accountId}`, {
    method: 'PATCH', body: JSON.stringify({ limits }), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('admission: claim, then limits, then reserve', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  it('replays before the limits, and gives back an id the limits refused', async () => {
    const account = await t.account('5');
    await limit(t, account.id, { requests_per_minute: 1 });
    const first = await post(t, account.key, 'adm-1');
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    // The minute's one request is spent, yet the completed operation is answered again.
    const replay = await post(t, account.key, 'adm-1');
    expect([replay.status, replay.headers.get('x-gateway-operation-replayed')]).toEqual([200, 'true']);
    await replay.arrayBuffer();
    const refused = await post(t, account.key, 'adm-2');
    expect([refused.status, (await refused.json()).error.code]).toEqual([429, 'rate_limited']);
    expect(await t.settled(account.id)).toMatchObject({ heldNano: 0n, openHolds: 0 });
    await limit(t, account.id, { requests_per_minute: null });
    const retried = await post(t, account.key, 'adm-2');
    expect([retried.status, retried.headers.get('x-gateway-operation-replayed')]).toEqual([200, null]);
    await retried.arrayBuffer();
    expect((await t.usage(account.id)).data).toHaveLength(2);
  });
});
