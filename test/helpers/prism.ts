/**
 * Prism (@stoplight/prism-cli) as a child process for contract tests: `prism proxy` in front of the
 * gateway (test/contract/prism-gateway*.test.ts) or `prism mock` playing a vendor behind it
 * (test/contract/prism-vendors.test.ts). Also reads Prism 5.14's log, request by request, and compiles
 * request-body schemas with the very Ajv setup Prism uses (Prism skips validation for a schema that
 * does not compile, without a word). Plus what the proxy tests share: calls, the zero-violation check,
 * SSE splitting and component validators.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Prism's log without colours. */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/** A running Prism: its URL, the child process, and everything it printed (stdout and stderr). */
export interface PrismProcess {
  url: string;
  child: ChildProcess;
  /** The whole output so far, colours included. */
  log(): string;
}

/** Spawns `prism ARGS --port P` and resolves once it listens (startup on a big spec can take 20+ s). */
export async function spawnPrism(args: string[], startTimeoutMs = 90_000): Promise<PrismProcess> {
  const port = await freePort();
  const child = spawn(resolve('node_modules/.bin/prism'), [...args, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); fail(new Error(`prism did not start:\n${output}`)); }, startTimeoutMs);
    const onData = () => {
      const found = /Prism is listening on (http:\/\/\S+)/.exec(stripAnsi(output));
      if (found) { clearTimeout(timer); child.stdout!.off('data', onData); child.stderr!.off('data', onData); ok(found[1]!); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); fail(new Error(`prism exited (${code}):\n${output}`)); });
  });
  return { url, child, log: () => output };
}

/** `prism proxy SPEC UPSTREAM --errors`: validates requests and responses of a running server. */
export function startPrismProxy(spec: string, upstream: string): Promise<PrismProcess> {
  return spawnPrism(['proxy', spec, upstream, '--errors']);
}

/**
 * `prism mock SPEC -d false -v debug`: answers from the spec's examples (static mode), validating every
 * request; at debug level Prism also logs each request's headers and body (see parsePrismLog).
 */
export function startPrismMock(spec: string): Promise<PrismProcess> {
  return spawnPrism(['mock', spec, '-d', 'false', '-v', 'debug']);
}

/** Stops a child: SIGTERM, then SIGKILL after 3 s. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((ok) => child.once('exit', ok));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((ok) => setTimeout(ok, 3_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/**
 * One request as Prism 5.14 logs it in mock mode (colours stripped; `debug` lines only with -v debug):
 *   [HTTP SERVER] post /chat/completions ℹ info Request received
 *       [NEGOTIATOR] ⬤ debug < Headers:   /  < \tx-api-key: ...   /  < Body: {"model":...}
 *       [VALIDATOR] ✔ success The request passed the validation rules. Looking for the best response
 *       [NEGOTIATOR] ℹ info > Responding with "200"
 *       [VALIDATOR] ✖ error Violation: response.body ...   (the spec's own example fails its schema: ignored here)
 * or, for an invalid request:
 *       [VALIDATOR] ⚠ warning Request did not pass the validation rules
 *       [VALIDATOR] ✖ error Request body property temperature must be number
 *   [HTTP SERVER] post /chat/completions ✖ error Request terminated with error: https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY: Invalid request
 * A request that passes with warning-level violations logs them as VALIDATOR warnings before the
 * success line, and again as `Violation: request...` lines: both count as request violations here.
 */
export interface PrismLoggedRequest {
  method: string;
  path: string;
  lines: string[];
  /** Prism logged "The request passed the validation rules". */
  passed: boolean;
  /** Every VALIDATOR warning or error line about the request (the violation texts), prefix removed. */
  violations: string[];
  /** `Violation: response...` lines: the mock's own answer does not match the spec (not the client's fault). */
  responseViolations: string[];
  /** The request headers, names lower-cased (logged at debug level only). */
  headers: Record<string, string>;
  /** The request body as Prism parsed it (logged at debug level only; undefined otherwise). */
  body: unknown;
  /** The status Prism answered with (`> Responding with "200"`), when logged. */
  status: number | null;
  /** The `Request terminated with error: ...` text, when Prism refused the request. */
  terminated: string | null;
  /** Prism is done with this request (responded or terminated). */
  complete: boolean;
}

const RECEIVED = /\[HTTP SERVER\] (\w+) (\S+) .*Request received/;

/** Splits Prism's log (or a slice of it) into requests. */
export function parsePrismLog(text: string): PrismLoggedRequest[] {
  const out: PrismLoggedRequest[] = [];
  let current: PrismLoggedRequest | null = null;
  for (const line of stripAnsi(text).split('\n')) {
    const start = RECEIVED.exec(line);
    if (start) {
      current = { method: start[1]!.toUpperCase(), path: start[2]!, lines: [], passed: false, violations: [], responseViolations: [], headers: {}, body: undefined, status: null, terminated: null, complete: false };
      out.push(current);
    }
    if (!current || !line.trim()) continue;
    current.lines.push(line);
    if (/\[VALIDATOR\].*The request passed the validation rules/.test(line)) current.passed = true;
    const violation = /\[VALIDATOR\]\s+\S+\s+(?:warning|error)\s+(.*)$/.exec(line);
    if (violation) (/^Violation: response\b/.test(violation[1]!) ? current.responseViolations : current.violations).push(violation[1]!.trim());
    const header = /debug\s+< \t([^:]+): (.*)$/.exec(line);
    if (header) current.headers[header[1]!.toLowerCase()] = header[2]!;
    const body = /debug\s+< Body: (.*)$/.exec(line);
    if (body) { try { current.body = JSON.parse(body[1]!); } catch { current.body = body[1]; } }
    const responding = /> Responding with "(\d{3})"/.exec(line);
    if (responding) { current.status = Number(responding[1]); current.complete = true; }
    const terminated = /Request terminated with error: (.*)$/.exec(line);
    if (terminated) { current.terminated = terminated[1]!.trim(); current.complete = true; }
  }
  return out;
}

/** A position in a Prism's log, to read the requests logged after it. */
export function logMark(prism: PrismProcess): number {
  return prism.log().length;
}

/** Waits until Prism has logged `count` complete requests after `mark`, and returns them (fewer on timeout). */
export async function loggedRequestsSince(prism: PrismProcess, mark: number, count = 1, timeoutMs = 5_000): Promise<PrismLoggedRequest[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const requests = parsePrismLog(prism.log().slice(mark));
    if (requests.filter((r) => r.complete).length >= count || Date.now() > deadline) return requests;
    await new Promise((ok) => setTimeout(ok, 25));
  }
}

/** Ajv options Prism 5.14 uses (prism-http dist/validator/validators/utils.js), minus its console logger. */
export const prismAjvOptions = { allErrors: true, allowUnionTypes: true, allowMatchingProperties: true, strict: false, logger: false } as const;

/** JSON Schema 2020-12 keywords that a draft-07 Ajv silently ignores. */
export const ONLY_2020 = ['prefixItems', '$defs', 'unevaluatedProperties', 'unevaluatedItems', 'dependentRequired', 'dependentSchemas', '$dynamicRef', '$dynamicAnchor', '$anchor', 'minContains', 'maxContains', 'contentSchema'];

/** The result of compiling one request body schema the way Prism does. */
export interface CompiledBody {
  method: string;
  path: string;
  mediaType: string;
  dialect: 'draft7' | 'draft2019' | 'draft2020';
  /** null when Ajv compiled it; else the error (Prism would then skip validating this body). */
  error: string | null;
  /** 2020-12-only keywords in the schema (ignored by a draft-07 Ajv). */
  only2020: string[];
}

/**
 * Loads SPEC with Prism's own loader and compiles the request-body schemas of the operations `select`
 * keeps, with the Ajv, Ajv 2019/2020 and ajv-formats copies prism-http itself resolves, and its options.
 */
export async function compilePrismRequestBodies(spec: string, select: (op: { method: string; path: string }) => boolean): Promise<CompiledBody[]> {
  const projectRequire = createRequire(resolve('package.json'));
  const prismRequire = createRequire(projectRequire.resolve('@stoplight/prism-http'));
  const { getHttpOperationsFromSpec } = prismRequire('@stoplight/prism-http') as { getHttpOperationsFromSpec(spec: string): Promise<any[]> };
  type AjvClass = new (opts: object) => { compile(schema: object): unknown; addFormat(name: string, format: unknown): unknown };
  const load = (id: string): AjvClass => { const m = prismRequire(id) as { default?: AjvClass }; return (m.default ?? m) as AjvClass; };
  const addFormats = ((m: any) => m.default ?? m)(prismRequire('ajv-formats')) as (ajv: unknown) => void;
  const make = (A: AjvClass) => { const ajv = new A({ ...prismAjvOptions, coerceTypes: false }); addFormats(ajv); return ajv; };
  const byDialect = { draft7: make(load('ajv')), draft2019: make(load('ajv/dist/2019')), draft2020: make(load('ajv/dist/2020')) };
  const ops = await getHttpOperationsFromSpec(spec);
  const out: CompiledBody[] = [];
  for (const op of ops.filter((o) => select({ method: String(o.method).toUpperCase(), path: String(o.path) }))) {
    for (const content of (op.request?.body?.contents ?? []).filter((c: any) => c.schema)) {
      const $schema = String(content.schema.$schema ?? '');
      const dialect = /2020-12/.test($schema) ? 'draft2020' : /2019-09/.test($schema) ? 'draft2019' : 'draft7';
      const schema = { ...content.schema, __bundled__: op.__bundled__ };
      const text = JSON.stringify(schema);
      let error: string | null = null;
      try { byDialect[dialect].compile(schema); } catch (e) { error = (e as Error).message; }
      out.push({ method: String(op.method).toUpperCase(), path: String(op.path), mediaType: String(content.mediaType), dialect, error, only2020: ONLY_2020.filter((k) => text.includes(`"${k}":`)) });
    }
  }
  return out;
}

/** One HTTP answer, read whole (`json` is null for SSE or an empty body). */
export interface Answer { status: number; headers: Headers; text: string; json: any }

/**
 * GET (no body) or POST JSON to BASE+PATH. `key` goes out as `Authorization: Bearer`, `apiKey` as
 * `x-api-key` (the Anthropic clients' way), `headers` as given (e.g. anthropic-version).
 */
export async function callJson(base: string, path: string, opts: { key?: string; apiKey?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method: opts.body === undefined ? 'GET' : 'POST', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { /* SSE or empty */ }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Through `prism proxy --errors`: zero violations (no `sl-violations` header, no problem+json body), the
 * expected status, and the answer is the gateway's (its x-request-id), not one Prism made up.
 */
export function expectClean(res: Answer, status: number, requestId = true): void {
  expect(res.headers.get('sl-violations'), res.headers.get('sl-violations') ?? '').toBeNull();
  expect(res.headers.get('content-type')).not.toContain('problem+json');
  expect(res.status, res.text).toBe(status);
  if (requestId) expect(res.headers.get('x-request-id')).toMatch(/\S/);
}

/** One server-sent event: its `event:` name (null without one) and its `data:` lines joined. */
export interface SseEvent { event: string | null; data: string }

/** Splits an SSE body into events (blank-line separated; comments and empty events skipped). */
export function sseEvents(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split(/\n\n+/)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) out.push({ event, data: data.join('\n') });
  }
  return out;
}

/** A validator of one `components.schemas` entry of an OpenAPI 3.1 document: Ajv 2020, Prism's options. */
export function componentValidator(components: unknown, name: string): { (data: unknown): boolean; errorsText(): string } {
  const ajv = new Ajv2020({ ...prismAjvOptions });
  ajv.addSchema({ $id: 'https://gateway.local/openapi.json', components });
  const validate = ajv.compile({ $ref: `https://gateway.local/openapi.json#/components/schemas/${name}` });
  return Object.assign((data: unknown) => validate(data), { errorsText: () => ajv.errorsText(validate.errors) });
}

/**
 * Sends one client request through the gateway (POST `route` with `key`) and returns the single request
 * `vendor`'s mock logged for it, checked to reach `path` and to pass Prism's validation with no
 * violation; the client's status comes back beside it (mock answers are placeholders).
 */
export async function gatewayRequestAsLogged(gatewayUrl: string, key: string, vendor: PrismProcess, route: string, body: unknown, path: string): Promise<{ logged: PrismLoggedRequest; status: number }> {
  const mark = logMark(vendor);
  const res = await fetch(`${gatewayUrl}${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const [logged, ...rest] = await loggedRequestsSince(vendor, mark, 1);
  const detail = `client ${res.status}: ${text.slice(0, 1000)}\nprism:\n${logged?.lines.join('\n').slice(0, 6000)}`;
  expect(rest, detail).toEqual([]);
  expect(`${logged!.method} ${logged!.path}`, detail).toBe(`POST ${path}`);
  expect(logged!.violations, detail).toEqual([]);
  expect(logged!.passed, detail).toBe(true);
  return { logged: logged!, status: res.status };
}

/**
 * Any method and body to BASE+PATH (a POST without a body, a DELETE, a multipart FormData, raw bytes);
 * `key` goes out as `Authorization: Bearer`. The body's content type is the caller's (FormData sets its own).
 */
export async function callHttp(base: string, path: string, opts: { method?: string; key?: string; headers?: Record<string, string>; body?: string | Uint8Array<ArrayBuffer> | FormData } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const res = await fetch(`${base}${path}`, { method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'), headers, body: opts.body });
  const text = await res.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { /* binary, SSE or empty */ }
  return { status: res.status, headers: res.headers, text, json };
}
