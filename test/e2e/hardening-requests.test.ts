/**
 * Hardening of request bodies and path parameters, over every route of the route table by its kind
 * (fuzzRoutes: the OpenAPI request body, JSON, multipart or none, and the path parameters):
 *  (d) unparsable, empty, non-object and wrongly typed bodies: 400 in the route's format, before any
 *      upstream call, nothing charged. A JSON route refuses a form; a multipart route refuses JSON and
 *      every broken form (no boundary, wrong part names, no file, too many files or fields, a field
 *      over its size, a field its schema refuses, a truncated body); a body-less route (finalize)
 *      ignores what it is sent and answers as without it, unless the bytes cannot be parsed at all;
 *  (g) hostile path parameters (traversal, encoded slashes, NUL, unicode, lengths around the router's
 *      limit, another account's id): never a 5xx, the route's own 404, no upstream call, nothing charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { errorFields, errorShapeProblems, fuzzRoutes, rawHttp, resolveSchema, type FuzzRoute, type RawResponse } from '../helpers/fuzz.js';
import { encodeMultipart, preRoutingError, type FormPart } from '../helpers/fuzz-requests.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  expectError, fillPath, FORM_BOUNDARY, FORM_SAMPLE, PARAM_SAMPLE, SAMPLE, sampleRequest, settledState, versionHeaders,
} from '../helpers/route-samples.js';

const ROUTES = fuzzRoutes();
const byKind = (kind: FuzzRoute['body']) => ROUTES.filter((r) => r.method === 'POST' && r.body === kind).map((r) => [r.id, r] as const);
const JSON_TYPE = { 'content-type': 'application/json' };
const FORM_TYPE = { 'content-type': `multipart/form-data; boundary=${FORM_BOUNDARY}` };

/** One case: label, body, headers, and the expected status and code (null: the route's answer without a body). */
type Case = [string, string | Buffer | undefined, Record<string, string>, number | null, string | null];

describeStore('hardening: request bodies and path parameters', () => {
  let t: TestGateway;
  let account: { id: string; key: string };

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('1');
  });
  afterAll(async () => { await t?.dispose(); });

  const send = (r: FuzzRoute, path: string, body: string | Buffer | undefined, headers: Record<string, string>, method: string = r.method) => rawHttp(t.url, {
    method, path, body, headers: { authorization: `Bearer ${account.key}`, ...versionHeaders(t, r), ...headers },
  });

  /** Runs the cases on one path; every answer in the route's format, no upstream call, nothing charged. */
  async function runCases(r: FuzzRoute, path: string, cases: Case[], baseline: RawResponse | null = null): Promise<void> {
    const before = await settledState(t, account.id);
    const upstreamCalls = t.sim.requests;
    for (const [label, body, headers, status, code] of cases) {
      const res = await send(r, path, body, headers);
      const expected = status === null ? { status: baseline!.status, code: String(errorFields(baseline!.body).code) } : { status, code: code! };
      const error = expectError(r, res, expected.status, expected.code, `${r.id} ${label}`);
      // Cohere's error shape has no type (`{message, code}`).
      if (expected.status === 400) expect(error.type, label).toBe(r.shape === 'cohere' ? undefined : 'invalid_request_error');
    }
    expect(await settledState(t, account.id)).toEqual(before);
    expect(t.sim.requests, `${r.id}: upstream calls`).toBe(upstreamCalls);
  }

  describe('(d) unparsable and non-object bodies', () => {
    it.each(byKind('json'))('%s (JSON body): 400 in the route format, no upstream call, nothing charged', async (_id, r) => {
      const sample = SAMPLE[r.id]!;
      await runCases(r, r.path, [
        ['malformed JSON', '{"model": "gpt-4o-mini", "messages": [', JSON_TYPE, 400, 'invalid_json'],
        ['trailing garbage', `${JSON.stringify(sample)}x`, JSON_TYPE, 400, 'invalid_json'],
        ['single quotes', "{'model':'gpt-4o-mini'}", JSON_TYPE, 400, 'invalid_json'],
        ['wrong content type (text/plain)', JSON.stringify(sample), { 'content-type': 'text/plain' }, 400, 'invalid_request'],
        ['wrong content type (form)', 'model=gpt-4o-mini', { 'content-type': 'application/x-www-form-urlencoded' }, 400, 'invalid_request'],
        ['wrong content type (multipart)', '--x--', { 'content-type': 'multipart/form-data; boundary=x' }, 400, 'invalid_request'],
        ['the sample as a real form', encodeMultipart(Object.entries(sample).map(([name, v]) => ({ name, data: typeof v === 'string' ? v : JSON.stringify(v) })), FORM_BOUNDARY), FORM_TYPE, 400, 'invalid_request'],
        // An empty body is no body, whatever the content type says: the route needs a JSON object.
        ['empty body, JSON content type', '', JSON_TYPE, 400, 'invalid_json'],
        ['empty body, no content type', undefined, {}, 400, 'invalid_json'],
        ['JSON array', JSON.stringify([sample]), JSON_TYPE, 400, 'invalid_request'],
        ['JSON null', 'null', JSON_TYPE, 400, 'invalid_request'],
        ['JSON string', '"hello"', JSON_TYPE, 400, 'invalid_request'],
        ['JSON number', '42', JSON_TYPE, 400, 'invalid_request'],
      ]);
      const empty = await send(r, r.path, undefined, {});
      expect(errorFields(empty.body).message).toMatch(/empty/);
    });

    it.each(byKind('multipart'))('%s (multipart form): JSON and broken forms are 400 (413 for a field over its size) in the route format, before any upstream call', async (_id, r) => {
      const spec = t.gw.generation().gateway.routes.find((c) => c.manifest.id === r.id)!.multipart!;
      const good = FORM_SAMPLE[r.id]!;
      const form = (parts: FormPart[]) => encodeMultipart(parts, FORM_BOUNDARY);
      const fileParts = good.filter((p) => p.filename !== undefined);
      const [fileName, filePart] = Object.entries(spec.files)[0]!;
      // A text field the schema bounds, given a value below its minimum (or of the wrong type).
      const bounded = Object.entries(r.form!.fields.properties ?? {}).map(([name, s]) => [name, resolveSchema(s)] as const).find(([, s]) => s.minimum !== undefined || s.type === 'integer');
      const cases: Case[] = [
        ['the form\'s fields as JSON', JSON.stringify({}), JSON_TYPE, 400, 'invalid_request'],
        ['a JSON array', '[]', JSON_TYPE, 400, 'invalid_request'],
        // A route that takes JSON too (spec 4.8 audio) answers an empty JSON body as every JSON route does.
        ['empty body, JSON content type', '', JSON_TYPE, 400, spec.acceptsJson ? 'invalid_json' : 'invalid_request'],
        ['empty body, no content type', undefined, {}, 400, 'invalid_request'],
        ['text/plain', 'file=hello', { 'content-type': 'text/plain' }, 400, 'invalid_request'],
        ['urlencoded', 'file=hello', { 'content-type': 'application/x-www-form-urlencoded' }, 400, 'invalid_request'],
        ['multipart/mixed', form(good), { 'content-type': `multipart/mixed; boundary=${FORM_BOUNDARY}` }, 400, 'invalid_request'],
        ['no boundary', form(good), { 'content-type': 'multipart/form-data' }, 400, 'invalid_request'],
        ['another boundary', form(good), { 'content-type': 'multipart/form-data; boundary=other' }, 400, 'invalid_request'],
        ['no parts at all', `--${FORM_BOUNDARY}--\r\n`, FORM_TYPE, 400, 'invalid_request'],
        ['not a form', 'hello world', FORM_TYPE, 400, 'invalid_request'],
        ['truncated', form(good).subarray(0, 60), FORM_TYPE, 400, 'invalid_request'],
        ['the file under another part name', form(fileParts.map((p) => ({ ...p, name: `${p.name}_x` }))), FORM_TYPE, 400, 'invalid_request'],
        ['the file as a text field', form(fileParts.map((p) => ({ name: p.name, data: p.data }))), FORM_TYPE, 400, 'invalid_request'],
        [`${filePart.max + 1} files in '${fileName}'`, form(Array.from({ length: filePart.max + 1 }, () => ({ name: fileName, filename: 'a.txt', type: 'text/plain', data: 'hello' }))), FORM_TYPE, 400, 'invalid_request'],
        ['an undeclared text field', form([{ name: 'undeclared_field', data: 'x' }, ...good]), FORM_TYPE, 400, 'invalid_request'],
        [`${spec.maxFields + 1} text fields`, form([...Array.from({ length: spec.maxFields + 1 }, (_, i) => ({ name: `f${i}`, data: 'x' })), ...good]), FORM_TYPE, 400, 'invalid_request'],
        ['a text field over its size', form([{ name: bounded?.[0] ?? 'note', data: '9'.repeat(spec.fieldMaxBytes + 1) }, ...good]), FORM_TYPE, 413, 'payload_too_large'],
        ['the JSON content type on a form', form(good), JSON_TYPE, 400, 'invalid_json'],
        ['the version header empty', form(good), { ...FORM_TYPE, ...Object.fromEntries(Object.keys(versionHeaders(t, r)).map((n) => [n, ''])) }, Object.keys(versionHeaders(t, r)).length > 0 ? 400 : 200, 'invalid_request'],
      ];
      if (bounded) {
        const [name, s] = bounded;
        cases.push([`${name} below its minimum`, form([{ name, data: String((s.minimum ?? 1) - 1) }, ...good]), FORM_TYPE, 400, 'invalid_request']);
        cases.push([`${name} not a number`, form([{ name, data: 'soon' }, ...good]), FORM_TYPE, 400, 'invalid_request']);
      }
      await runCases(r, r.path, cases.filter((c) => c[3] !== 200));
    });

    // Found by the multipart fuzz: parts a form parser must survive. Not a 5xx; a 4xx in the route's format, or a stored file.
    it.each(byKind('multipart'))('%s (multipart form): a part without a name, NUL bytes in a filename or part type: no 5xx', async (_id, r) => {
      const [fileName] = Object.keys(t.gw.generation().gateway.routes.find((c) => c.manifest.id === r.id)!.multipart!.files);
      const problems: string[] = [];
      for (const [label, part] of [
        ['a file part without a name', { filename: 'a.txt', type: 'text/plain', data: 'hello' }],
        ['a NUL in the filename', { name: fileName, filename: 'a\u0000b.txt', type: 'text/plain', data: 'hello' }],
        ['a NUL in the part type', { name: fileName, filename: 'a.txt', type: 'text/\u0000plain', data: 'hello' }],
      ] as Array<[string, FormPart]>) {
        const res = await send(r, r.path, encodeMultipart([part], FORM_BOUNDARY), FORM_TYPE);
        if (res.status >= 500) problems.push(`${label}: ${res.status} ${res.body.slice(0, 200)}`);
        else if (res.status >= 400) problems.push(...errorShapeProblems(r.shape, res.body).map((p) => `${label}: ${p}`));
      }
      expect(problems).toEqual([]);
    });

    it.each(byKind('none'))('%s (no body): the body is ignored, unless it cannot be parsed; no upstream call, nothing charged', async (_id, r) => {
      const path = fillPath(r.path, Object.fromEntries(r.pathParams.map((p) => [p, 'no-such-id'])));
      const baseline = await send(r, path, undefined, {});
      // Without a body, an unknown id is the route's own 404.
      if (r.pathParams.length > 0) expect(baseline.status, baseline.body).toBe(404);
      await runCases(r, path, [
        ['empty body, JSON content type', '', JSON_TYPE, null, null],
        ['a JSON object', JSON.stringify({ file_id: 'another', purpose: 'x' }), JSON_TYPE, null, null],
        ['a JSON array', '[]', JSON_TYPE, null, null],
        ['JSON null', 'null', JSON_TYPE, null, null],
        ['malformed JSON', '{"file_id":', JSON_TYPE, 400, 'invalid_json'],
        ['a form', encodeMultipart([{ name: 'file', filename: 'a.txt', type: 'text/plain', data: 'x' }], FORM_BOUNDARY), FORM_TYPE, 400, 'invalid_request'],
        ['urlencoded', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }, 400, 'invalid_request'],
        // Only a raw body route reads text/plain (as bytes); like any type but JSON, others refuse it.
        ['text/plain', 'hello', { 'content-type': 'text/plain' }, 400, 'invalid_request'],
      ], baseline);
      // On a real id the route answers 200 with or without a body it ignores.
      const sample = await sampleRequest({ t, account }, r);
      const res = await rawHttp(t.url, { ...sample, headers: { ...sample.headers, ...JSON_TYPE }, body: JSON.stringify({ ignored: true }) });
      expect(res.status, res.body).toBe(200);
    });
  });

  describe('(g) hostile path parameters', () => {
    const HOSTILE_IDS = [
      '..', '%2e%2e', '.', 'a%2Fb', '%2F..%2F..%2Fetc%2Fpasswd', '%5C..%5C', '__proto__', 'constructor', "'%20OR%20'1'='1", '%0D%0Ax-injected:%201',
      '%F0%9F%A7%A8%C3%A9', '%E2%80%AE', 'f'.repeat(1024), 'f'.repeat(1025), '%E0%A4%A', '%ZZ', '%00', 'a%00b',
    ];
    const withParams = ROUTES.filter((r) => r.pathParams.length > 0).map((r) => [`${r.method} ${r.path}`, r] as const);

    it('covers every route with path parameters, each with a sample', () => {
      expect(withParams.length).toBeGreaterThan(0);
      expect(withParams.filter(([, r]) => !PARAM_SAMPLE[r.id]).map(([label]) => label)).toEqual([]);
    });

    it.each(withParams)('%s: never a 5xx; the route\'s own 404 in its format; no upstream call, nothing charged', async (_label, r) => {
      const before = await settledState(t, account.id);
      const upstreamCalls = t.sim.requests;
      const problems: string[] = [];
      for (const id of HOSTILE_IDS) {
        const path = fillPath(r.path, Object.fromEntries(r.pathParams.map((p) => [p, '\u0001']))).replace(/%01/g, id);
        const res = await send(r, path, undefined, {});
        const label = `${id.length > 40 ? `${id.slice(0, 10)}... (${id.length})` : id} -> ${res.status} ${res.body.slice(0, 160)}`;
        if (res.status >= 500) problems.push(`5xx: ${label}`);
        else if (preRoutingError(res.body)) { if (![400, 404].includes(res.status)) problems.push(`pre-routing: ${label}`); }
        else if (res.status !== 404 || errorShapeProblems(r.shape, res.body).length > 0) problems.push(`not the route's 404: ${label}`);
      }
      expect(problems).toEqual([]);
      expect(await settledState(t, account.id)).toEqual(before);
      expect(t.sim.requests).toBe(upstreamCalls);
    });

    // Another account's resource: either public (this account gets it too) or answered exactly like an unknown id.
    it.each(withParams)('%s: another account\'s id is public, or exactly an unknown id\'s answer (and stays intact)', async (_label, r) => {
      const other = await t.account('1');
      const theirs = await sampleRequest({ t, account: other }, r);
      const mine = await send(r, theirs.path, theirs.body, theirs.headers['content-type'] ? { 'content-type': theirs.headers['content-type'] } : {});
      if (mine.status === 200 && r.method === 'GET') return; // a public resource (a model)
      const unknown = await send(r, fillPath(r.path, Object.fromEntries(r.pathParams.map((p) => [p, 'no-such-id']))), undefined, {});
      expect([mine.status, errorFields(mine.body).code], mine.body).toEqual([unknown.status, errorFields(unknown.body).code]);
      expect(mine.status).toBe(404);
      // The owner still gets its answer: the other account's attempt changed nothing.
      const owner = await rawHttp(t.url, theirs);
      expect(owner.status, owner.body.slice(0, 200)).toBe(200);
    });
  });
});
