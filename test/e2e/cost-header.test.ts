/**
 * X-Gateway-Cost-USD on native routes (issue 31 item 12): on a sample of them (JSON and binary
 * answers, search units, records, characters, seconds, tokens, images; Cohere's own routes) the header
 * is exactly what the request's usage row charged, and an answer that was not charged says 0: OpenAI's
 * free moderation (its $0 row) and a replayed image operation (no new row).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatUsd } from '../../src/money.js';
import { describeStore, storeKind } from '../helpers/db.js';
import type { TestGateway } from '../helpers/gateway.js';
import { SAMPLE, startSampleGateway } from '../helpers/route-samples.js';

const PATHS: Record<string, string> = {
  rerank: '/v1/rerank', translate: '/v1/translate', embeddings: '/v1/embeddings', moderations: '/v1/moderations',
  'language-analyze': '/v1/language/analyze', speech: '/v1/audio/speech', 'sound-effects': '/v1/audio/sound-effects',
  'images-generations': '/v1/images/generations', 'cohere-rerank': '/v2/rerank', 'cohere-embed': '/v2/embed',
};

describeStore(`X-Gateway-Cost-USD on native routes (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startSampleGateway(); });
  afterAll(async () => { await t?.dispose(); });

  const post = async (key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers }> => {
    const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return { status: res.status, headers: res.headers };
  };

  it('equals the usage row of each request', async () => {
    const account = await t.account('5');
    for (const [id, path] of Object.entries(PATHS)) {
      const a = await post(account.key, path, SAMPLE[id]);
      expect(a.status, id).toBe(200);
      const rows = (await t.usage(account.id)).data.filter((r) => r.requestId === a.headers.get('x-request-id'));
      expect(rows, id).toHaveLength(1);
      expect(rows[0]!.amountNano, id).toBeGreaterThan(0n);
      expect(a.headers.get('x-gateway-cost-usd'), id).toBe(formatUsd(rows[0]!.amountNano));
    }
  });

  it('says 0 on an answer that was not charged: a free model\'s $0 row, a replayed operation', async () => {
    const account = await t.account('5');
    const free = await post(account.key, '/v1/moderations', { model: 'omni-moderation-latest', input: 'hello' });
    expect(free.headers.get('x-gateway-cost-usd')).toBe('0');
    const [row] = (await t.usage(account.id)).data;
    expect([row!.requestId, row!.amountNano]).toEqual([free.headers.get('x-request-id'), 0n]);

    const operation = { 'x-gateway-operation-id': `op-${Date.now()}` };
    const first = await post(account.key, '/v1/images/generations', SAMPLE['images-generations'], operation);
    const rows = (await t.usage(account.id)).data.length;
    const replay = await post(account.key, '/v1/images/generations', SAMPLE['images-generations'], operation);
    expect([first.status, replay.status, replay.headers.get('x-gateway-operation-replayed')]).toEqual([200, 200, 'true']);
    expect(first.headers.get('x-gateway-cost-usd')).not.toBe('0');
    expect(replay.headers.get('x-gateway-cost-usd')).toBe('0');
    expect((await t.usage(account.id)).data).toHaveLength(rows);
  });
});
