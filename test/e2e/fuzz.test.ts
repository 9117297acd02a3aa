/**
 * Property-based fuzzing of every route in the route table over real HTTP, against a started
 * gateway and its simulator (no faults). Each route is fuzzed by its kind, derived from the route
 * table and the OpenAPI document (fuzzRoutes), never from its id:
 *  - a JSON body: bodies from its request schema (valid-ish) and hostile ones (wrong types, huge
 *    strings, deep nesting, unicode, prototype-pollution keys, odd numbers, unknown and existing
 *    models, raw non-JSON text): this file;
 *  - path, query and version-header parameters (GET, DELETE, body-less POST, any route with path
 *    parameters or a required header): fuzz-params.test.ts;
 *  - a multipart body (hostile forms), and forms sent to JSON routes: fuzz-forms.test.ts.
 *
 * Properties, for every answer (test/helpers/fuzz-harness.ts):
 *  (a) no 5xx: without faults the simulator never fails, so any 5xx is the gateway's own;
 *  (b) an error is JSON in the route's error shape; a success is JSON, SSE with JSON data frames, or the declared media type;
 *  (c) a 4xx changes no balance, writes no usage row and leaves no hold open (a free route never does);
 *  (d) no stack trace, internal path or the client's key in an error body; no CR/LF or unknown header line;
 *  (e) a route with no upstream in the route table makes no upstream call when it refuses.
 *
 * FUZZ_RUNS (default 150) sets the runs per property, FUZZ_SEED the seed (fixed by default);
 * fast-check prints the seed, path and shrunk counterexample of a failure. FUZZ_STATS=1 prints how
 * the answers of each property were distributed (status and error code).
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { fuzzParameters, fuzzRoutes, fuzzSettings, hostileBodyArb, hostileHeadersArb, nestedBodyArb, validishBodyArb } from '../helpers/fuzz.js';
import { fuzzHarness } from '../helpers/fuzz-harness.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { FUZZED_BY_FORMS, FUZZED_BY_PARAMS } from '../helpers/fuzz-requests.js';

const ROUTES = fuzzRoutes();
const { numRuns, seed } = fuzzSettings();
/** A small balance: cheap models fit, expensive or long requests get 402. */
const BALANCE_USD = '0.10';

describeStore('fuzz: every route against its request schema', () => {
  let t: TestGateway;
  const h = fuzzHarness(() => t);

  beforeAll(async () => {
    t = await startTestGateway();
    await t.clearFaults();
  });
  afterAll(async () => { await t?.dispose(); });

  it('covers every route of the route table, each by its kind', () => {
    // Each kind comes from the OpenAPI request body: JSON routes have a schema, multipart ones a form with a file part.
    for (const r of ROUTES.filter((x) => x.body === 'json')) expect(r.requestSchema, r.id).not.toBeNull();
    for (const r of ROUTES.filter((x) => x.body === 'multipart')) expect(r.form?.files.length, r.id).toBeGreaterThan(0);
    // A body-less POST has something else to fuzz: its path parameters.
    for (const r of ROUTES.filter((x) => x.method === 'POST' && x.body === 'none')) expect(r.pathParams, r.id).not.toEqual([]);
    // Every route is fuzzed by at least one of the three files; each file's selection is the predicate it loops over.
    const unfuzzed = ROUTES.filter((r) => r.body !== 'json' && !FUZZED_BY_PARAMS(r) && !FUZZED_BY_FORMS(r)).map((r) => `${r.method} ${r.path}`);
    expect(unfuzzed).toEqual([]);
    expect(ROUTES.filter((r) => r.body === 'json').map((r) => r.path)).toEqual(expect.arrayContaining(['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/rerank', '/v1/translate']));
  });

  beforeEach(() => { h.stats.clear(); });
  afterEach((context) => {
    if (process.env.FUZZ_STATS && h.stats.size > 0) console.log(`${context.task.name}: ${[...h.stats].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} x${n}`).join(', ')}`);
  });

  /** Each property has 100 s for its cases (the test allows 150 s); running out of time fails it. */
  const options = (runs = numRuns): fc.Parameters<unknown> => fuzzParameters({ numRuns: runs, seed, timeLimitMs: 100_000 });

  for (const route of ROUTES.filter((r) => r.body === 'json')) {
    it(`${route.id}: bodies built from the request schema`, async () => {
      const account = await t.account(BALANCE_USD);
      await fc.assert(fc.asyncProperty(validishBodyArb(route), async (body) => {
        await h.exercise(route, account, { path: route.path, headers: { ...h.baseHeaders(route, account.key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      }), options());
    }, 150_000);

    it(`${route.id}: hostile bodies and headers`, async () => {
      const account = await t.account(BALANCE_USD);
      await fc.assert(fc.asyncProperty(hostileBodyArb(route), hostileHeadersArb(h.requiredHeaders(route)), async (body, headers) => {
        await h.exercise(route, account, { path: route.path, headers: { authorization: `Bearer ${account.key}`, ...headers }, body: body.text, label: body.label });
      }), options());
    }, 150_000);

    it(`${route.id}: deeply nested JSON`, async () => {
      const account = await t.account(BALANCE_USD);
      await fc.assert(fc.asyncProperty(nestedBodyArb(route, 12_000), async (body) => {
        await h.exercise(route, account, { path: route.path, headers: { ...h.baseHeaders(route, account.key), 'content-type': 'application/json' }, body: body.text, label: body.label });
      }), options(Math.max(1, Math.ceil(numRuns / 3))));
    }, 150_000);
  }
});
