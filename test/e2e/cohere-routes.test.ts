/**
 * Cohere's own routes (issue 31 item 11): POST /v2/rerank and POST /v2/embed in Cohere's v2 shapes
 * (../shared/specs/cohere V2RerankRequest/Response, V2EmbedRequest, EmbedByTypeResponse), through the
 * gateway to the simulator playing Cohere. Billed as /v1/rerank (one search unit) and /v1/embeddings
 * (the input tokens Cohere reports), each usage row of kind the serving route's id; errors in Cohere's
 * shape (`{message}`, plus the gateway's `code`), nothing reserved or charged for a refused request.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson } from '../helpers/native.js';

describeStore(`Cohere's v2 routes (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const lastUpstream = async (): Promise<{ path: string; body: any }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;

  it('/v2/rerank: Cohere\'s answer with meta.billed_units, documents when asked, one search billed', async () => {
    const account = await t.account('1');
    const documents = ['Paris is the capital of France.', 'Bananas are yellow.', 'Berlin is in Germany.'];
    const a = await postJson(t, '/v2/rerank', account.key, { model: 'rerank-pro', query: 'capital of France', documents, top_n: 2, return_documents: true, max_tokens_per_doc: null });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json).toMatchObject({ id: expect.any(String), meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } });
    expect(a.json.results).toHaveLength(2);
    expect(a.json.results[0]).toEqual({ index: 0, relevance_score: expect.any(Number), document: { text: documents[0] } });
    expect(await lastUpstream()).toMatchObject({ path: '/v2/rerank', body: { model: 'rerank-v3.5', query: 'capital of France', documents, top_n: 2 } });
    expect([a.headers.get('x-gateway-searches'), a.headers.get('x-gateway-cost-usd')]).toEqual(['1', '0.002']);
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => [r.kind, r.model, r.unit, r.quantity, r.amountNano])).toEqual([['cohere-rerank', 'rerank-pro', 'search', 1n, 2_000_000n]]);
  });

  it('/v2/embed: embeddings by type in text order, the texts, the billed input tokens, billed at the input price', async () => {
    const account = await t.account('1');
    const a = await postJson(t, '/v2/embed', account.key, { model: 'embed-pro', texts: ['sunny day', 'rainy night'], input_type: 'search_query', embedding_types: ['float', 'int8'], output_dimension: 256 });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json).toMatchObject({ id: expect.any(String), response_type: 'embeddings_by_type', texts: ['sunny day', 'rainy night'] });
    expect(a.json.embeddings.float.map((e: number[]) => e.length)).toEqual([256, 256]);
    expect(a.json.embeddings.int8).toHaveLength(2);
    const tokens = a.json.meta.billed_units.input_tokens as number;
    expect(tokens).toBeGreaterThan(0);
    expect((await lastUpstream()).body).toEqual({ model: 'embed-v4.0', texts: ['sunny day', 'rainy night'], input_type: 'search_query', embedding_types: ['float', 'int8'], output_dimension: 256 });
    const rows = (await t.usage(account.id)).data;
    // $0.12 per 1M input tokens.
    expect(rows.map((r) => [r.kind, r.model, r.unit, r.quantity, r.amountNano])).toEqual([['cohere-embed', 'embed-pro', 'token', BigInt(tokens), BigInt(tokens) * 120n]]);
    expect(a.headers.get('x-gateway-cost-usd')).toBe((tokens * 0.00000012).toFixed(9).replace(/0+$/, ''));
  });

  it('refuses bad input, other formats\' models and a missing key in Cohere\'s error shape; nothing reserved or charged', async () => {
    const account = await t.account('1');
    const cases: Array<[string, unknown, number, string]> = [
      ['/v2/rerank', { model: 'rerank-pro', query: 'q' }, 400, 'invalid_request'],
      ['/v2/rerank', { model: 'rerank-pro', query: 'q', documents: [{ text: 'v2 takes texts' }] }, 400, 'invalid_request'],
      ['/v2/rerank', { model: 'gpt-4o-mini', query: 'q', documents: ['d'] }, 400, 'model_not_available'],
      ['/v2/embed', { model: 'embed-pro', texts: ['x'] }, 400, 'invalid_request'],
      ['/v2/embed', { model: 'embed-pro', texts: ['x'], input_type: 'search_query', images: ['data:image/png;base64,aGk='] }, 400, 'invalid_request'],
      ['/v2/embed', { model: 'text-embedding-3-small', texts: ['x'], input_type: 'search_query' }, 400, 'invalid_request'],
      ['/v2/embed', { model: 'nope', texts: ['x'], input_type: 'search_query' }, 400, 'model_not_found'],
    ];
    for (const [path, body, status, code] of cases) {
      const a = await postJson(t, path, account.key, body);
      expect([a.status, a.json.code, typeof a.json.message, a.json.error], `${path} ${JSON.stringify(body)}`).toEqual([status, code, 'string', undefined]);
    }
    const other = await postJson(t, '/v2/embed', account.key, { model: 'text-embedding-3-small', texts: ['x'], input_type: 'search_query' });
    expect(other.json.message).toContain('/v1/embeddings');
    const noKey = await fetch(`${t.url}/v2/rerank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ message: expect.any(String), code: expect.any(String) });
    await expectUntouched(t, account, 1_000_000_000n);
  });

  it('charges nothing when Cohere fails, and says so in Cohere\'s shape', async () => {
    const account = await t.account('1');
    await t.fault({ status: 500 });
    const a = await postJson(t, '/v2/rerank', account.key, { model: 'rerank-pro', query: 'q', documents: ['d'] });
    expect(a.status).toBeGreaterThanOrEqual(500);
    expect(a.json).toMatchObject({ message: expect.any(String), code: expect.any(String) });
    await expectUntouched(t, account, 1_000_000_000n);
  });
});
