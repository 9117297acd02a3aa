/**
 * GET /v1/models and /v1/models/{id} (spec 4.17; issue 31 items 4 and 5): one shape both official SDKs
 * parse (OpenAI's id, object, created, owned_by; Anthropic's type, display_name, created_at; the
 * list's has_more, first_id, last_id), Anthropic's paging query, aliases listed and retrieved under
 * their own id. Free, at zero balance.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** One model object as the route answers it. */
interface Model { id: string; object: string; created: number; owned_by: string; type: string; display_name: string; created_at: string }
/** The list as the route answers it. */
interface ModelList { object: string; data: Model[]; has_more: boolean; first_id: string | null; last_id: string | null }

describeStore('GET /v1/models in the shape of both SDKs', () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  const get = async (path: string): Promise<{ status: number; json: any }> => {
    const res = await fetch(`${t.url}${path}`, { headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' } });
    return { status: res.status, json: await res.json() };
  };

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('0');
  });
  afterAll(async () => { await t?.dispose(); });

  it('lists every model with both vendors\' fields, each alias after its offering, as one page without limit', async () => {
    const { status, json } = await get('/v1/models');
    expect(status).toBe(200);
    const list = json as ModelList;
    expect(list).toMatchObject({ object: 'list', has_more: false, first_id: list.data[0]!.id, last_id: list.data.at(-1)!.id });
    const ids = list.data.map((m) => m.id);
    // providers/anthropic.yaml: the dated id right after the offering, under the offering's display name.
    expect(ids.slice(ids.indexOf('claude-sonnet-4-5'), ids.indexOf('claude-sonnet-4-5') + 2)).toEqual(['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929']);
    expect(ids).toEqual(expect.arrayContaining(['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-mini-2024-07-18', 'claude-haiku-4-5-20251001']));
    // A coming-soon offering and its alias are not listed.
    expect(ids).not.toContain('claude-opus-4-5-20251101');
    expect(list.data.find((m) => m.id === 'claude-sonnet-4-5-20250929')).toEqual({
      id: 'claude-sonnet-4-5-20250929', object: 'model', created: 1759104000, owned_by: 'anthropic',
      type: 'model', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z',
    });
    // Without a display_name in YAML, the id.
    expect(list.data.find((m) => m.id === 'o4-mini')).toMatchObject({ display_name: 'o4-mini', created_at: new Date(1744225351 * 1000).toISOString().replace('.000Z', 'Z') });
  });

  it('pages with limit, after_id and before_id as Anthropic does', async () => {
    const all = ((await get('/v1/models')).json as ModelList).data.map((m) => m.id);
    expect(all.length).toBeGreaterThan(4);
    const first = (await get('/v1/models?limit=2')).json as ModelList;
    expect(first).toMatchObject({ has_more: true, first_id: all[0], last_id: all[1] });
    expect(first.data.map((m) => m.id)).toEqual(all.slice(0, 2));
    const next = (await get(`/v1/models?limit=2&after_id=${all[1]}`)).json as ModelList;
    expect(next.data.map((m) => m.id)).toEqual(all.slice(2, 4));
    const last = (await get(`/v1/models?limit=1000&after_id=${all[1]}`)).json as ModelList;
    expect(last).toMatchObject({ has_more: false, last_id: all.at(-1) });
    const before = (await get(`/v1/models?limit=2&before_id=${all[3]}`)).json as ModelList;
    expect(before).toMatchObject({ has_more: true, first_id: all[1], last_id: all[2] });
    expect(((await get(`/v1/models?before_id=${all[1]}`)).json as ModelList)).toMatchObject({ has_more: false, first_id: all[0], last_id: all[0] });
    const empty = (await get(`/v1/models?after_id=${all.at(-1)}`)).json as ModelList;
    expect(empty).toEqual({ object: 'list', data: [], has_more: false, first_id: null, last_id: null });
  });

  it('refuses a bad page query with a 400 naming the parameter', async () => {
    for (const [query, param] of [['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=two', 'limit'], ['limit=1&limit=2', 'limit'], ['after_id=no-such-model', 'after_id'], ['after_id=gpt-4o&before_id=gpt-4o', 'before_id']]) {
      const { status, json } = await get(`/v1/models?${query}`);
      expect(status, query).toBe(400);
      expect(json.error, query).toMatchObject({ code: 'invalid_request', param });
    }
  });

  it('retrieves an alias under its own id, and answers 404 for an unknown or coming-soon one', async () => {
    expect((await get('/v1/models/gpt-4o-2024-08-06')).json).toMatchObject({ id: 'gpt-4o-2024-08-06', owned_by: 'openai', display_name: 'GPT-4o', type: 'model' });
    // Retrieve takes any service type (the list filters by it): Cohere's own rerank name too.
    expect((await get('/v1/models/rerank-v3.5')).json).toMatchObject({ id: 'rerank-v3.5', owned_by: 'cohere', display_name: 'rerank-pro' });
    expect(await get('/v1/models/claude-opus-4-5-20251101')).toMatchObject({ status: 404, json: { error: { code: 'model_not_available' } } });
    expect(await get('/v1/models/claude-opus-4-5-20990101')).toMatchObject({ status: 404, json: { error: { code: 'model_not_found' } } });
  });

  it('works with both official SDKs: openai list and retrieve, Anthropic auto-paging and retrieve of an alias', async () => {
    const anthropic = new Anthropic({ baseURL: t.url, apiKey: account.key, maxRetries: 0 });
    const openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const whole: string[] = [];
    for await (const m of openai.models.list()) whole.push(m.id);
    const paged: string[] = [];
    for await (const m of anthropic.models.list({ limit: 3 })) paged.push(m.id);
    expect(paged).toEqual(whole);
    const dated = await anthropic.models.retrieve('claude-haiku-4-5-20251001');
    expect(dated).toMatchObject({ type: 'model', id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5' });
    expect(await openai.models.retrieve('gpt-4o-mini-2024-07-18')).toMatchObject({ id: 'gpt-4o-mini-2024-07-18', object: 'model', owned_by: 'openai' });
    await expect(anthropic.models.retrieve('claude-sonnet-4-5-20990101')).rejects.toMatchObject({ status: 404 });
    expect((await t.settled(account.id)).balanceNano).toBe(0n);
  });
});
