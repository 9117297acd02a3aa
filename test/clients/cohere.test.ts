/**
 * Cohere's own SDK (cohere-ai 8) against a real gateway, unchanged, over real HTTP, its environment
 * the gateway's bare origin: the v1 client's rerank reaches the gateway's POST /v1/rerank today;
 * CohereClientV2 reaches the gateway's own POST /v2/rerank and /v2/embed (item 11), answered in Cohere's
 * shape. One search unit per rerank. A usage row's kind is the id of the route that served it (as on every
 * quantity-metered route): `rerank` for /v1/rerank, `cohere-rerank` and `cohere-embed` for Cohere's routes.
 */
import { CohereClient, CohereClientV2 } from 'cohere-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUsage, lastUpstream, newRows, startClientsGateway, type ClientsGateway } from './harness.js';
import { pending } from './pending.js';

describe('cohere-ai against the gateway', () => {
  let g: ClientsGateway;
  beforeAll(async () => { g = await startClientsGateway(); });
  afterAll(async () => { await g?.dispose(); });

  const documents = ['Bananas are yellow.', 'Paris is the capital of France.', 'Berlin is in Germany.'];

  it('CohereClient (v1) rerank: POST /v1/rerank, camel-cased results, one search billed at $0.002', async () => {
    const before = await adminUsage(g);
    const cohere = new CohereClient({ token: g.account.key, environment: g.url });
    const { results } = await cohere.rerank({ model: 'rerank-pro', query: 'capital of France', documents, topN: 2 });
    expect(results.map((r) => r.index)).toHaveLength(2);
    expect(results[0]!.index).toBe(1);
    expect(results[0]!.relevanceScore).toBeGreaterThanOrEqual(results[1]!.relevanceScore);
    const upstream = await lastUpstream(g);
    expect([upstream.path, upstream.body.model, upstream.body.top_n]).toEqual(['/v2/rerank', 'rerank-v3.5', 2]);
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.kind, r.model, r.quantity, r.amount_usd])).toEqual([['rerank', 'rerank-pro', 1, '0.002']]);
  });

  // Item 11: Cohere's v2 routes; item 4 for Cohere's own model names.
  it.skipIf(pending('item-11'))('CohereClientV2 rerank on rerank-pro: POST /v2/rerank, one search billed', async () => {
    const before = await adminUsage(g);
    const cohere = new CohereClientV2({ token: g.account.key, environment: g.url });
    const { results } = await cohere.rerank({ model: 'rerank-pro', query: 'capital of France', documents, topN: 1 });
    expect(results.map((r) => r.index)).toEqual([1]);
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.kind, r.quantity, r.amount_usd])).toEqual([['cohere-rerank', 1, '0.002']]);
  });

  it.skipIf(pending('item-11', 'item-4'))('CohereClientV2 rerank on rerank-v3.5 (an alias of rerank-pro)', async () => {
    const cohere = new CohereClientV2({ token: g.account.key, environment: g.url });
    const { results } = await cohere.rerank({ model: 'rerank-v3.5', query: 'capital of France', documents, topN: 1 });
    expect(results).toHaveLength(1);
  });

  it.skipIf(pending('item-11'))('CohereClientV2 embed on embed-pro: float embeddings of 1536, billed by the input tokens it reports', async () => {
    const before = await adminUsage(g);
    const cohere = new CohereClientV2({ token: g.account.key, environment: g.url });
    const answer = await cohere.embed({ model: 'embed-pro', texts: ['sunny day', 'rainy night'], inputType: 'search_document', embeddingTypes: ['float'] });
    expect(answer.embeddings.float?.map((e) => e.length)).toEqual([1536, 1536]);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ kind: 'cohere-embed', model: 'embed-pro', quantity: answer.meta?.billedUnits?.inputTokens });
  });
});
