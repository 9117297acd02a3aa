/**
 * Contract over the whole route table (how Prism is used: prism-gateway.test.ts): every route's sample
 * request (test/helpers/route-samples.ts: a JSON body, a multipart form, or real path parameters) goes
 * through `prism proxy --errors` over src/generated/openapi.json and comes back with zero violations.
 *
 * Coverage, since Prism skips a schema it cannot compile without a word: against a copy of the
 * document whose every JSON success answer must also carry `no_such_field`, every route with a JSON
 * answer must fail, naming that field; so Prism really validates each route's answer. A route whose
 * success answer the document does not describe (a binary download) is listed, and must be one of those.
 * A new route is covered by adding its sample; the loop finds it in the route table.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from '../helpers/db.js';
import { fuzzRoutes } from '../helpers/fuzz.js';
import type { TestGateway } from '../helpers/gateway.js';
import { callHttp, expectClean, startPrismProxy, stopChild } from '../helpers/prism.js';
import { sampleRequest, startSampleGateway } from '../helpers/route-samples.js';

const SPEC = resolve('src/generated/openapi.json');
const ROUTES = fuzzRoutes();

/** The document with every JSON 200 answer also requiring `no_such_field`. */
function strictDocument(): unknown {
  const doc = JSON.parse(readFileSync(SPEC, 'utf8')) as { paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>> };
  for (const operations of Object.values(doc.paths)) {
    for (const operation of Object.values(operations)) {
      const json = operation.responses?.['200']?.content?.['application/json'];
      if (json?.schema) json.schema = { allOf: [json.schema, { type: 'object', required: ['no_such_field'] }] };
    }
  }
  return doc;
}

describe.runIf(storeKind === 'pglite')('Prism contract: every route of the route table answers its sample as documented', () => {
  let t: TestGateway;
  let prism: Awaited<ReturnType<typeof startPrismProxy>>;
  let strictPrism: Awaited<ReturnType<typeof startPrismProxy>>;
  let tmp: string;

  beforeAll(async () => {
    t = await startSampleGateway();
    tmp = mkdtempSync(join(tmpdir(), 'gw-prism-routes-'));
    writeFileSync(join(tmp, 'strict.json'), JSON.stringify(strictDocument()));
    [prism, strictPrism] = await Promise.all([startPrismProxy(SPEC, t.url), startPrismProxy(join(tmp, 'strict.json'), t.url)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([stopChild(prism?.child), stopChild(strictPrism?.child)]);
    await t?.dispose();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  /** The route's sample through a Prism (a fresh account each time: samples create files). */
  async function throughPrism(base: string, id: string) {
    const r = ROUTES.find((x) => x.id === id)!;
    const account = await t.account('5');
    const req = await sampleRequest({ t, account }, r);
    return callHttp(base, req.path, { method: req.method, headers: req.headers, body: typeof req.body === 'string' || req.body === undefined ? req.body : new Uint8Array(req.body) });
  }

  it.each(ROUTES.map((r) => [`${r.method} ${r.path}`, r.id] as const))('%s: the sample passes with no violation', async (_label, id) => {
    const res = await throughPrism(prism.url, id);
    expectClean(res, 200);
  });

  it('coverage: Prism validates the answer of every route with a JSON answer; the others are downloads', async () => {
    const undocumented = ROUTES.filter((r) => r.answerTypes.length === 0 || r.answerTypes.includes('*/*'));
    // A success the document describes as bytes of any type can only be a download: its bytes, not JSON.
    for (const r of undocumented) {
      const res = await throughPrism(t.url, r.id);
      expect(res.status, r.id).toBe(200);
      expect(res.headers.get('content-disposition'), r.id).toMatch(/^attachment/);
    }
    const unchecked: string[] = [];
    for (const r of ROUTES.filter((x) => x.answerTypes.includes('application/json'))) {
      const res = await throughPrism(strictPrism.url, r.id);
      const caught = res.status === 500 && /errors#VIOLATIONS$/.test(String(res.json?.type)) && (res.headers.get('sl-violations') ?? '').includes('no_such_field');
      if (!caught) unchecked.push(`${r.id}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(unchecked).toEqual([]);
  }, 120_000);
});
