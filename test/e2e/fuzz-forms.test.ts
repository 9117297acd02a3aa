/**
 * Property-based fuzzing (how and why: fuzz.test.ts) of multipart forms, on every route whose OpenAPI
 * request body is multipart/form-data (fuzzRoutes; the form's file parts and text-field schema come
 * from the document, its limits from the compiled route):
 *  - hostile forms: valid-ish forms under mutations (parts renamed, dropped, duplicated, turned from
 *    file to field and back, without a name; hostile filenames and part types; field values at and
 *    past their bounds; a field over its size; too many fields; odd part headers), in broken
 *    envelopes now and then (no, wrong or empty boundary, multipart/mixed, truncated, unclosed, bare
 *    LF, a preamble, a JSON or no content type);
 *  - JSON sent to a multipart route;
 *  - and the other way round: forms sent to every JSON route.
 * Properties (a)-(e) of the harness, and (g): a request that is not multipart/form-data is a 400 on
 * a multipart route, and a form is a 400 invalid_request on a JSON route (both in the route's format,
 * before any upstream call).
 * Each run of a multipart route uses a fresh account, so the per-account file quota never decides the answer.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { arbitraryFromSchema, errorFields, fuzzParameters, fuzzRoutes, fuzzSettings, hostileValueArb, toJsonText, validishBodyArb, type ErrorFields, type ErrorShape, type RawResponse } from '../helpers/fuzz.js';
import { fuzzHarness } from '../helpers/fuzz-harness.js';
import { encodeMultipart, fieldsAsParts, FUZZED_BY_FORMS, hostileFormArb } from '../helpers/fuzz-requests.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ROUTES = fuzzRoutes();
const FORMS = ROUTES.filter(FUZZED_BY_FORMS);
const { numRuns, seed } = fuzzSettings();
const BALANCE_USD = '0.10';

/** (g): the answer is a 400 in the route's format (the harness checks the shape), with `code` when given, before any upstream call. */
const refused = (label: string, code?: string, unknownFile = false, shape: ErrorShape = 'openai') => (res: RawResponse, _here: boolean, upstreamCalls: number): string[] => {
  // A route that takes JSON too (spec 4.8 audio) resolves a JSON `file_id`: an unknown one is 404 file_not_found.
  if (unknownFile && res.status === 404) return upstreamCalls === 0 && /"code":"file_not_found"/.test(res.body) ? [] : [`(g) ${label}: a 404 that is not file_not_found, or after an upstream call`];
  if (res.status !== 400) return [`(g) ${label}: expected 400, got ${res.status}`];
  if (upstreamCalls !== 0) return [`(g) ${label}: ${upstreamCalls} upstream call(s) before the refusal`];
  let error: ErrorFields;
  try { JSON.parse(res.body); error = errorFields(res.body); } catch { return [`(g) ${label}: the 400 is not JSON`]; }
  // Cohere's error shape has no type (`{message, code}`).
  if (error.type !== (shape === 'cohere' ? undefined : 'invalid_request_error')) return [`(g) ${label}: error type ${String(error.type)}`];
  return code && error.code !== code ? [`(g) ${label}: code ${error.code}, expected ${code}`] : [];
};

describeStore('fuzz: multipart forms', () => {
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

  const options = (runs = numRuns): fc.Parameters<unknown> => fuzzParameters({ numRuns: runs, seed, timeLimitMs: 100_000 });

  it('finds the multipart routes in the OpenAPI document', () => {
    expect(FORMS.length).toBeGreaterThan(0);
    for (const r of FORMS) expect(t.gw.generation().gateway.routes.find((c) => c.manifest.id === r.id)?.multipart, r.id).toBeTruthy();
  });

  for (const route of FORMS) {
    it(`${route.id}: hostile forms`, async () => {
      const spec = t.gw.generation().gateway.routes.find((c) => c.manifest.id === route.id)!.multipart!;
      await fc.assert(fc.asyncProperty(hostileFormArb(route, spec), async (form) => {
        const account = await t.account(BALANCE_USD);
        const headers = { ...h.baseHeaders(route, account.key), ...(form.contentType ? { 'content-type': form.contentType } : {}) };
        await h.exercise(route, account, { path: route.path, headers, body: form.body, label: form.label },
          form.multipartType ? undefined : refused(`${form.contentType || 'no content type'} on a multipart route`));
      }), options());
    }, 150_000);

    it(`${route.id}: JSON instead of a form`, async () => {
      const account = await t.account(BALANCE_USD);
      const json = fc.oneof(arbitraryFromSchema(route.form!.fields), fc.jsonValue({ maxDepth: 3 }), hostileValueArb).map(toJsonText);
      const type = fc.constantFrom('application/json', 'application/json; charset=utf-8');
      await fc.assert(fc.asyncProperty(json, type, async (body, contentType) => {
        await h.exercise(route, account, { path: route.path, headers: { ...h.baseHeaders(route, account.key), 'content-type': contentType }, body }, refused('JSON on a multipart route', undefined, route.acceptsJson === true));
      }), options(Math.max(1, Math.ceil(numRuns / 3))));
    }, 150_000);
  }

  for (const route of ROUTES.filter((r) => r.body === 'json')) {
    it(`${route.id}: a form instead of JSON`, async () => {
      const account = await t.account(BALANCE_USD);
      const form = fc.tuple(validishBodyArb(route), fc.boolean()).map(([body, withFile]) => encodeMultipart(
        [...fieldsAsParts(body), ...(withFile ? [{ name: 'file', filename: 'a.txt', type: 'text/plain', data: 'hello' }] : [])], 'gwfuzzboundary'));
      await fc.assert(fc.asyncProperty(form, async (body) => {
        await h.exercise(route, account, { path: route.path, headers: { ...h.baseHeaders(route, account.key), 'content-type': 'multipart/form-data; boundary=gwfuzzboundary' }, body }, refused('a form on a JSON route', 'invalid_request', false, route.shape));
      }), options(Math.max(1, Math.ceil(numRuns / 5))));
    }, 150_000);
  }
});
