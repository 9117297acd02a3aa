/**
 * Property-based fuzzing (how and why: fuzz.test.ts) of what a route takes besides a JSON body: its
 * path parameters, query string and version header. Runs over every route without a body (GET,
 * DELETE, a body-less POST such as finalize) and every route with path parameters, as fuzzRoutes
 * derives them from the route table and the OpenAPI document:
 *  - path parameters: the ids of real resources of this account and of another one (the route's
 *    sample, test/helpers/route-samples.ts), mutations of them, traversal (`..`, encoded slashes),
 *    NUL, unicode, and lengths around the router's limit;
 *  - query strings (GET): the declared names and the usual paging ones, with numbers at and past
 *    their bounds and hostile encodings;
 *  - version headers (routes that require one): accepted variants and refused ones;
 *  - a body a body-less route should ignore, now and then.
 * Properties (a)-(e) of the harness, and (f): a refused version header is a 400 naming the header in
 * the route's format, an accepted one is never refused for its version (on requests that reach the
 * route: an empty id may turn the path into another route's, or into none).
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { errorFields, fuzzParameters, fuzzRoutes, fuzzSettings, type RawResponse } from '../helpers/fuzz.js';
import { fuzzHarness } from '../helpers/fuzz-harness.js';
import { FUZZED_BY_PARAMS, idSegmentArb, PAGING_NAMES, preRoutingError, queryStringArb, versionVariantArb } from '../helpers/fuzz-requests.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { PARAM_SAMPLE } from '../helpers/route-samples.js';

const ROUTES = fuzzRoutes().filter(FUZZED_BY_PARAMS);
const { numRuns, seed } = fuzzSettings();
const BALANCE_USD = '0.10';

/** Junk a body-less route should ignore or refuse cleanly: JSON and non-JSON text under a few content types. */
const junkBodyArb = fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({
  text: fc.oneof(fc.constantFrom('', '{}', '[]', 'null', '{"file_id":"x"}', '{', 'a=1', '--x--'), fc.json({ maxDepth: 2 }), fc.string({ unit: 'binary', maxLength: 40 })),
  type: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', ''),
}) });

describeStore('fuzz: path, query and version-header parameters', () => {
  let t: TestGateway;
  const h = fuzzHarness(() => t);

  beforeAll(async () => {
    t = await startTestGateway();
    await t.clearFaults();
  });
  afterAll(async () => { await t?.dispose(); });

  beforeEach(() => { h.stats.clear(); });
  afterEach((context) => {
    if (process.env.FUZZ_STATS && h.stats.size > 0) console.log(`${context.task.name}: ${[...h.stats].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} x${n}`).join(', ')}`);
  });

  it('takes every GET, DELETE and body-less route, and every route with path parameters', () => {
    expect(ROUTES.length).toBeGreaterThan(0);
    expect(fuzzRoutes().filter((r) => r.method !== 'POST' && !FUZZED_BY_PARAMS(r))).toEqual([]);
  });

  /** (f): a refused version header is a 400 naming it; an accepted one is never refused for its version. */
  const versionCheck = (names: string[], valid: boolean, label: string) => (res: RawResponse, here: boolean): string[] => {
    if (!here || preRoutingError(res.body)) return [];
    if (res.status < 400) return valid ? [] : [`(f) ${label}: a version header the route must refuse was answered ${res.status}`];
    let message = '';
    let code = '';
    const e = errorFields(res.body); // not JSON: (b) reports it
    message = typeof e.message === 'string' ? e.message : ''; code = typeof e.code === 'string' ? e.code : '';
    const namesHeader = res.status === 400 && names.some((n) => message.includes(n));
    if (valid && namesHeader) return [`(f) ${label}: an accepted version header was refused`];
    if (!valid && !namesHeader && !(res.status === 400 && code === 'invalid_json')) return [`(f) ${label}: expected a 400 naming ${names.join(' or ')}, got ${res.status} ${code}`];
    return [];
  };

  const options = (): fc.Parameters<unknown> => fuzzParameters({ numRuns, seed, timeLimitMs: 100_000 });

  for (const route of ROUTES) {
    it(`${route.id}: path, query and version-header parameters`, async () => {
      const account = await t.account(BALANCE_USD);
      const other = await t.account(BALANCE_USD);
      // Real ids: two of this account's resources (one may be deleted along the way) and one of another account.
      const known = new Map<string, string[]>(route.pathParams.map((p) => [p, []]));
      if (route.pathParams.length > 0) {
        for (const owner of [account, account, other]) {
          const params = await PARAM_SAMPLE[route.id]!({ t, account: owner });
          for (const [name, value] of Object.entries(params)) known.get(name)?.push(encodeURIComponent(value));
        }
      }
      const required = h.requiredHeaders(route);
      const names = required.flatMap((x) => [x.name, ...x.aliases]);
      const segments = fc.tuple(...route.pathParams.map((p) => idSegmentArb(known.get(p)!)));
      const query = route.method === 'GET' ? queryStringArb([...new Set([...route.queryParams, ...PAGING_NAMES])]) : fc.constant('');
      const body = route.body === 'none' && route.method !== 'GET' ? junkBodyArb : fc.constant(null);
      await fc.assert(fc.asyncProperty(segments, query, versionVariantArb(required), body, async (values, q, version, junk) => {
        let path = route.path;
        route.pathParams.forEach((name, i) => { path = path.replace(`{${name}}`, values[i]!); });
        const headers: Record<string, string> = { authorization: `Bearer ${account.key}`, ...version.headers, ...(junk?.type ? { 'content-type': junk.type } : {}) };
        await h.exercise(route, account, { path: q ? `${path}?${q}` : path, headers, body: junk?.text, label: `${version.label}${junk ? `; body ${JSON.stringify(junk.text.slice(0, 40))} as ${junk.type}` : ''}` },
          // A body is parsed before the version is checked: (f) is checked on the runs without one.
          junk ? undefined : versionCheck(names, version.valid, version.label));
      }), options());
    }, 150_000);
  }
});
