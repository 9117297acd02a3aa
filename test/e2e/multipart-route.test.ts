/**
 * A multipart route end to end (issue 9 point 3), through fastify, the pipeline and the simulator: a
 * route that declares `body: {type: multipart}` (here a form version of rerank, added to a config copy)
 * takes its text fields through the route's JSON Schema with their types coerced, and its file parts
 * under their declared limits; a JSON route refuses a multipart body; an oversized or undeclared part
 * is refused with nothing reserved or charged.
 */
import { FormData } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describeStore(`multipart route (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => {
    const copy = await copyConfig();
    await copy.write('routes/rerank-form.yaml', [
      'version: 1', 'id: rerank-form', 'summary: Rerank from a form (test).', 'method: POST', 'path: /v1/rerank-form',
      'format: native-json', 'handler: proxy', 'schemas: { request: native-json/rerank-request.json }', 'service_types: [RERANK]',
      'body: { type: multipart, files: { notes: { max_bytes: 64, mime: [text/plain], max: 1 } }, max_fields: 20, field_max_bytes: 256 }',
      'meter: { search: { source: { constant: 1 } } }', 'upstreams: [{ operation: rerank }]', '',
    ].join('\n'));
    t = await startTestGateway({ configFile: copy.configFile });
  });
  afterAll(async () => { await t?.dispose(); });

  const send = async (key: string, path: string, body: FormData): Promise<{ status: number; json: any }> => {
    const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: body as unknown as BodyInit });
    return { status: res.status, json: await res.json() };
  };
  const rerankForm = (extra: (f: FormData) => void = () => undefined): FormData => {
    const f = new FormData();
    f.append('model', 'rerank-pro');
    f.append('query', 'capital of France');
    f.append('documents[]', 'Paris is the capital of France.');
    f.append('documents[]', 'Bananas are yellow.');
    f.append('top_n', '1');
    extra(f);
    return f;
  };

  it('validates the fields with their types coerced, takes the declared file, and bills like JSON', async () => {
    const account = await t.account('1');
    const a = await send(account.key, '/v1/rerank-form', rerankForm((f) => f.append('notes', new Blob(['fine'], { type: 'text/plain' }), 'notes.txt')));
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json.results).toEqual([{ index: 0, relevance_score: expect.any(Number) }]);
    expect((await t.usage(account.id)).data.map((r) => [r.kind, r.quantity, r.amountNano])).toEqual([['rerank-form', 1n, 2_000_000n]]);
  });

  it('refuses what the form declaration does not allow, and a multipart body on a JSON route, charging nothing', async () => {
    const account = await t.account('1');
    const cases: Array<[string, FormData, number, string | null]> = [
      ['/v1/rerank-form', rerankForm((f) => f.append('notes', new Blob(['x'.repeat(65)], { type: 'text/plain' }), 'n.txt')), 413, 'notes'],
      ['/v1/rerank-form', rerankForm((f) => f.append('image', new Blob(['x'], { type: 'image/png' }), 'i.png')), 400, 'image'],
      ['/v1/rerank-form', rerankForm((f) => f.append('notes', new Blob(['%PDF-1.7'], { type: 'application/pdf' }), 'n.pdf')), 400, 'notes'],
      ['/v1/rerank-form', rerankForm((f) => f.set('top_n', 'one')), 400, 'top_n'],
      ['/v1/rerank', rerankForm(), 400, null],
    ];
    for (const [path, body, status, param] of cases) {
      const a = await send(account.key, path, body);
      expect(a.status, `${path} ${JSON.stringify(a.json)}`).toBe(status);
      expect(a.json.error.param ?? null).toBe(param);
    }
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n, heldNano: 0n, openHolds: 0 });
    expect((await t.usage(account.id)).data).toEqual([]);
  });
});
