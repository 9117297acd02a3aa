/**
 * Request arbitraries for what is not one JSON body (test/e2e/fuzz-params.test.ts, fuzz-forms.test.ts;
 * the hardening tests build their forms with encodeMultipart): path parameters (ids, traversal,
 * encodings, NUL, lengths around the router's limit), query strings, version-header variants with
 * whether the gateway must accept them, and multipart forms (valid-ish from the route's OpenAPI form
 * schema, then mutated and re-enveloped).
 */
import fc from 'fast-check';
import { arbitraryFromSchema, pathSegmentArb, textArb, toJsonText, type FuzzRoute } from './fuzz.js';

// ---------------------------------------------------------------------------------------------
// Path, query and version-header arbitraries (routes with path parameters, GET, DELETE, body-less POST)
// ---------------------------------------------------------------------------------------------

/** Ids that look like ids, traversal and encoding tricks, lone prefixes, NUL bytes, lengths around the router's limit. */
const TRICKY_IDS = [
  '..', '.', '%2e%2e', '%2E%2E%2F', '..%2F..%2Fetc%2Fpasswd', 'a%2Fb', '%2F', '%5C', 'a%5Cb', '%00', 'a%00b', '%0A', '%0D%0Ax-injected:%201',
  '%E2%80%AE', '%EF%BB%BF', '%F0%9F%A7%A8', 'file_gw_', 'tfile_', `file_gw_${'0'.repeat(24)}`, `tfile_${'f'.repeat(24)}`, 'FILE_GW_0', '%20', '+', '*',
  '%25', '%252e%252e', '__proto__', 'constructor', "'%20OR%201=1--", '%22',
];

/** A `{param}` value: the known ids (`known`, e.g. this account's and another's), mutations of them, and hostile segments. */
export function idSegmentArb(known: readonly string[]): fc.Arbitrary<string> {
  const mutated = known.length === 0 ? fc.constantFrom(...TRICKY_IDS) : fc.tuple(fc.constantFrom(...known), fc.constantFrom('upper', 'nul', 'slash', 'short', 'long', 'dots'))
    .map(([id, how]) => ({ upper: id.toUpperCase(), nul: `${id}%00`, slash: `${id}%2F..`, short: id.slice(0, -1), long: `${id}0`, dots: `..%2F${id}` })[how]);
  return fc.oneof(
    { weight: 3, arbitrary: known.length > 0 ? fc.constantFrom(...known) : pathSegmentArb },
    { weight: 2, arbitrary: mutated },
    { weight: 3, arbitrary: pathSegmentArb },
    { weight: 3, arbitrary: fc.constantFrom(...TRICKY_IDS) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map((s) => encodeURIComponent(s)) },
    { weight: 1, arbitrary: fc.constantFrom(1023, 1024, 1025, 4096).map((n) => 'f'.repeat(n)) },
  );
}

/** Query names any paged list may take: the declared ones come from the OpenAPI document, these are common to every list. */
export const PAGING_NAMES = ['limit', 'page', 'after_id', 'before_id'] as const;

/** Query values: numbers at and past usual bounds, number-like text, encodings fastify or a store may choke on. */
export const queryValueArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('0', '1', '2', '20', '999', '1000', '1001', '-1', '1e3', '0x10', '1.5', '%201', '', '%00', 'a%00', '%ZZ', '%', 'null', 'true', '%5B%5D', 'CHAT', 'chat') },
  { weight: 2, arbitrary: textArb.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6000 }).map((n) => 'x'.repeat(n)) },
);

/** A query string (without `?`) over `names` and a few hostile keys: repeated, bracketed, empty, or none at all. */
export function queryStringArb(names: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor[prototype][x]', 'x[]', '', '%00', 'limit[]') });
  const pair = fc.tuple(name, queryValueArb).map(([n, v]) => `${n}=${v}`);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 5, arbitrary: fc.array(pair, { minLength: 1, maxLength: 3 }).map((pairs) => pairs.join('&')) },
    { weight: 1, arbitrary: fc.constantFrom('&&&', '=', '==&=', ...names.flatMap((n) => [n, `${n}=1&${n}=2`, `${n}[x]=1`])) },
  );
}

/** A route's required header (the version header and its aliases), as the compiled route declares it. */
export interface RequiredHeaderSpec { name: string; aliases: string[]; values: string[] }

/** Version headers as sent, and whether the gateway must accept them (one accepted value under the name or an alias). */
export interface VersionVariant { headers: Record<string, string>; valid: boolean; label: string }

/** Version-header variants of a route: accepted ones (name, alias, any case, padded) and refused ones (missing, empty, wrong). */
export function versionVariantArb(required: readonly RequiredHeaderSpec[]): fc.Arbitrary<VersionVariant> {
  type One = { pair: [string, string] | null; valid: boolean; label: string };
  const one = (h: RequiredHeaderSpec): fc.Arbitrary<One> => fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...h.values).map((v): One => ({ pair: [h.name, v], valid: true, label: 'valid' })) },
    { weight: 2, arbitrary: fc.constantFrom(...h.aliases.flatMap((a) => h.values.map((v): One => ({ pair: [a, v], valid: true, label: `alias ${a}` }))), { pair: [h.name.toUpperCase(), h.values[0]!], valid: true, label: 'upper-case name' }, { pair: [h.name, ` ${h.values[0]}\t`], valid: true, label: 'padded value' }) },
    { weight: 3, arbitrary: fc.constantFrom<One>(
      { pair: null, valid: false, label: 'missing' }, { pair: [h.name, ''], valid: false, label: 'empty' }, { pair: [h.name, '2020-01-01'], valid: false, label: 'unknown version' },
      { pair: [h.name, 'latest'], valid: false, label: 'latest' }, { pair: [h.name, `${h.values[0]},${h.values.at(-1)}`], valid: false, label: 'two versions' },
      { pair: [h.name, `${h.values[0]}x`], valid: false, label: 'suffixed' }, { pair: [h.name, h.values[0]!.replace(/-/g, '/')], valid: false, label: 'slashes' },
      ...h.aliases.map((a): One => ({ pair: [a, '1999-12-31'], valid: false, label: `alias ${a} unknown version` })),
      { pair: [`x-${h.name}`, h.values[0]!], valid: false, label: 'misspelled name' },
    ) },
    { weight: 1, arbitrary: textArb.filter((s) => /^[\x21-\x7e]+$/.test(s) && !h.values.includes(s)).map((v): One => ({ pair: [h.name, v], valid: false, label: 'random value' })) },
  );
  return fc.tuple(...required.map(one)).map((all) => {
    const headers: Record<string, string> = {};
    for (const { pair } of all) if (pair) headers[pair[0]] = pair[1];
    return { headers, valid: all.every((o) => o.valid), label: all.map((o) => o.label).join(', ') || 'no version header' };
  });
}

/**
 * An error answered before routing (a URL fastify cannot decode, a parameter past the router's 1024
 * characters): the gateway's default shape and a generic code, whatever route the path looks like.
 * Tolerated, and reported (src/server/app.ts answers these in DEFAULT_CLIENT_FORMAT).
 */
export function preRoutingError(text: string): boolean {
  try {
    const body = JSON.parse(text) as { type?: unknown; error?: { code?: unknown; message?: unknown } };
    const { code, message } = body.error ?? {};
    return body.type === undefined && typeof message === 'string'
      && ((code === 'not_found' && message.startsWith('No route for ')) || (code === 'invalid_request' && message.startsWith('Malformed request: ')));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Multipart bodies
// ---------------------------------------------------------------------------------------------

/** One part of a multipart body; `name` or `filename` undefined leaves it out of Content-Disposition. */
export interface FormPart { name?: string; filename?: string; type?: string; data: string | Buffer; headers?: string[] }

/** A multipart body as bytes: `close: false` leaves out the closing boundary; `lf` uses bare LF line ends. */
export function encodeMultipart(parts: readonly FormPart[], boundary: string, opts: { close?: boolean; lf?: boolean; preamble?: string } = {}): Buffer {
  const nl = opts.lf ? '\n' : '\r\n';
  const chunks: Buffer[] = [];
  if (opts.preamble) chunks.push(Buffer.from(`${opts.preamble}${nl}`));
  for (const part of parts) {
    const disposition = ['form-data', part.name === undefined ? null : `name="${part.name}"`, part.filename === undefined ? null : `filename="${part.filename}"`].filter(Boolean).join('; ');
    const head = [`--${boundary}`, `Content-Disposition: ${disposition}`, ...(part.type === undefined ? [] : [`Content-Type: ${part.type}`]), ...(part.headers ?? [])];
    chunks.push(Buffer.from(`${head.join(nl)}${nl}${nl}`), Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data), Buffer.from(nl));
  }
  if (opts.close !== false) chunks.push(Buffer.from(`--${boundary}--${nl}`));
  return Buffer.concat(chunks);
}

/** A text field's value as a form sends it (strings as they are, anything else as JSON). */
const fieldText = (value: unknown): string => (typeof value === 'string' ? value : toJsonText(value));

/** Text fields from an object (one part per top-level key), e.g. a JSON body sent as a form. */
export function fieldsAsParts(body: Record<string, unknown>): FormPart[] {
  return Object.keys(body).map((name) => ({ name, data: fieldText(body[name]) }));
}

const FILENAMES = ['a.txt', 'notes.txt', '', ' ', '.', '..', '../../etc/passwd', 'C:\\\\x.txt', 'a"b.txt', '漢字🧨.txt', 'e\u0301.txt', 'a\u0000b.txt', '%00.txt', 'con', `${'f'.repeat(600)}.txt`, 'a;b=c.txt'];
const PART_TYPES = ['text/plain', 'image/png', 'application/pdf', 'application/octet-stream', 'text/plain; charset=utf-16', '', ';;;', 'x/\u0000y', 'image/svg+xml', `text/${'x'.repeat(300)}`, 'TEXT/PLAIN'];
const PART_NAMES = ['', 'FILE', 'file ', 'files', 'file[0]', '__proto__', 'constructor', 'toString', 'a\u0000', '漢字', 'x'.repeat(300), 'expires_in_seconds[]', 'model'];

/** Small file contents: text, binary noise, empty, a NUL, a BOM. */
const fileDataArb: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('hello', 'hello files', '{"a":1}', '%PDF-1.7\n', '\ufeffbom', '\u0000', '').map((s) => Buffer.from(s)) },
  { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 2048 }).map((a) => Buffer.from(a)) },
);

/** A valid-ish form for a multipart route: every required file part (and sometimes the optional ones) and text fields from its schema. */
export function validishFormArb(route: FuzzRoute): fc.Arbitrary<FormPart[]> {
  const form = route.form;
  if (!form) throw new Error(`route ${route.id} takes no multipart form`);
  const file = (name: string) => fc.record({ filename: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('a.txt', 'notes.txt', 'data.bin') }, { weight: 1, arbitrary: fc.constantFrom(...FILENAMES) }), type: fc.oneof({ weight: 4, arbitrary: fc.constant('text/plain') }, { weight: 1, arbitrary: fc.constantFrom(...PART_TYPES) }), data: fileDataArb })
    .map((f): FormPart => ({ name, ...f }));
  const optional = form.files.filter((n) => !form.requiredFiles.includes(n));
  return fc.tuple(fc.tuple(...form.requiredFiles.map(file)), fc.subarray(optional).chain((names) => fc.tuple(...names.map(file))), arbitraryFromSchema(form.fields))
    .map(([required, others, fields]) => [...fieldsAsParts(fields as Record<string, unknown>), ...required, ...others]);
}

/** One change to a form's parts. */
type FormMutation =
  | { kind: 'rename'; at: number; name: string } | { kind: 'drop'; at: number } | { kind: 'duplicate'; at: number }
  | { kind: 'as-field'; at: number } | { kind: 'as-file'; at: number } | { kind: 'no-name'; at: number }
  | { kind: 'filename'; at: number; filename: string } | { kind: 'type'; at: number; type: string | undefined }
  | { kind: 'value'; at: number; value: string } | { kind: 'big-field'; extra: number } | { kind: 'many-fields'; extra: number }
  | { kind: 'header'; at: number; header: string };

function mutateForm(parts: FormPart[], m: FormMutation, limits: { maxFields: number; fieldMaxBytes: number }): FormPart[] {
  const out = parts.map((p) => ({ ...p }));
  const at = 'at' in m && out.length > 0 ? m.at % out.length : -1;
  const part = at >= 0 ? out[at]! : null;
  switch (m.kind) {
    case 'rename': if (part) part.name = m.name; break;
    case 'drop': if (part) out.splice(at, 1); break;
    case 'duplicate': if (part) out.push({ ...part }); break;
    case 'as-field': if (part) { delete part.filename; delete part.type; } break;
    case 'as-file': if (part) { part.filename = 'field.txt'; part.type = 'text/plain'; } break;
    case 'no-name': if (part) delete part.name; break;
    case 'filename': if (part) part.filename = m.filename; break;
    case 'type': if (part) part.type = m.type; break;
    case 'value': if (part) part.data = m.value; break;
    case 'big-field': out.unshift({ name: out.find((p) => p.filename === undefined)?.name ?? 'note', data: 'x'.repeat(limits.fieldMaxBytes + m.extra) }); break;
    case 'many-fields': for (let i = 0; i <= limits.maxFields + m.extra; i++) out.push({ name: `f${i}`, data: 'x' }); break;
    case 'header': if (part) part.headers = [...(part.headers ?? []), m.header]; break;
  }
  return out;
}

/** A hostile multipart request: a valid-ish form under mutations, in a broken envelope now and then. */
export interface HostileForm { body: Buffer; contentType: string; label: string; multipartType: boolean }

/** Hostile multipart requests for a route: wrong part names, no file, files as fields, NUL and long names, oversize and too many fields, broken envelopes. */
export function hostileFormArb(route: FuzzRoute, limits: { maxFields: number; fieldMaxBytes: number }): fc.Arbitrary<HostileForm> {
  const mutation: fc.Arbitrary<FormMutation> = fc.oneof(
    fc.record({ kind: fc.constant('rename' as const), at: fc.nat(), name: fc.oneof(fc.constantFrom(...PART_NAMES), textArb) }),
    fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('as-field' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('as-file' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('no-name' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('filename' as const), at: fc.nat(), filename: fc.constantFrom(...FILENAMES) }),
    fc.record({ kind: fc.constant('type' as const), at: fc.nat(), type: fc.constantFrom(...PART_TYPES, undefined) }),
    fc.record({ kind: fc.constant('value' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom('3599', '3600', '86400', '86401', '-1', '0', '1e400', '-0', '0x1000', ' 3600 ', '3600.5', '', 'null', '[]'), textArb) }),
    fc.record({ kind: fc.constant('big-field' as const), extra: fc.integer({ min: 1, max: 2048 }) }),
    fc.record({ kind: fc.constant('many-fields' as const), extra: fc.integer({ min: 0, max: 5 }) }),
    fc.record({ kind: fc.constant('header' as const), at: fc.nat(), header: fc.constantFrom('Content-Transfer-Encoding: base64', 'Content-Length: 99999999', 'X-Evil: 1', 'Content-Disposition: form-data; name="other"') }),
  );
  const boundary = fc.oneof({ weight: 6, arbitrary: fc.constant('gwfuzzboundary') }, { weight: 1, arbitrary: fc.constantFrom('x', 'b'.repeat(70), 'b'.repeat(200), 'a b', '--', 'é') });
  const envelope = fc.oneof(
    { weight: 8, arbitrary: fc.constant('ok') },
    { weight: 1, arbitrary: fc.constantFrom('no boundary', 'wrong boundary', 'empty boundary', 'quoted boundary', 'multipart/mixed', 'upper case', 'truncated', 'unclosed', 'bare LF', 'preamble', 'json type', 'no type') },
  );
  return fc.tuple(validishFormArb(route), fc.array(mutation, { minLength: 0, maxLength: 3 }), boundary, envelope, fc.nat()).map(([parts, changes, b, how, cut]) => {
    let form = parts;
    for (const change of changes) form = mutateForm(form, change, limits);
    const body = encodeMultipart(form, b, { close: how !== 'unclosed', lf: how === 'bare LF', preamble: how === 'preamble' ? 'garbage before the first boundary' : undefined });
    const types: Record<string, string> = {
      'no boundary': 'multipart/form-data', 'wrong boundary': 'multipart/form-data; boundary=other', 'empty boundary': 'multipart/form-data; boundary=',
      'quoted boundary': `multipart/form-data; boundary="${b}"`, 'multipart/mixed': `multipart/mixed; boundary=${b}`, 'upper case': `MULTIPART/FORM-DATA; BOUNDARY=${b}`,
      'json type': 'application/json', 'no type': '',
    };
    const contentType = types[how] ?? `multipart/form-data; boundary=${b}`;
    return {
      body: how === 'truncated' ? body.subarray(0, cut % Math.max(1, body.length)) : body, contentType,
      label: `${changes.map((c) => c.kind).join(', ') || 'unchanged'}; envelope ${how}; boundary ${JSON.stringify(b.slice(0, 12))}`,
      multipartType: /^multipart\/form-data\b/i.test(contentType),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Which fuzz file takes which route (fuzz.test.ts checks that every route is taken by one)
// ---------------------------------------------------------------------------------------------

/** fuzz-params.test.ts: routes without a body (GET, DELETE, body-less POST) and any route with path parameters. */
export const FUZZED_BY_PARAMS = (r: FuzzRoute): boolean => r.body === 'none' || r.pathParams.length > 0;

/** fuzz-forms.test.ts: routes that take a multipart form. */
export const FUZZED_BY_FORMS = (r: FuzzRoute): boolean => r.body === 'multipart';
