/**
 * Property-based fuzzing of every route in the route table over real HTTP, against a started
 * gateway and its simulator (no faults). Bodies come from each route's request schema in the
 * OpenAPI document (valid-ish) and from hostile generators (wrong types, huge strings, deep nesting,
 * unicode, prototype-pollution keys, odd numbers, unknown and existing models, raw non-JSON text).
 *
 * Properties, for every answer:
 *  (a) no 5xx: without faults the simulator never fails, so any 5xx is the gateway's own;
 *  (b) an error is JSON in the route's error shape; a success is JSON, or SSE with JSON data frames;
 *  (c) a 4xx changes no balance, writes no usage row and leaves no hold open (a free route never does);
 *  (d) no stack trace, internal path or the client's key in an error body; no CR/LF or unknown header line.
 *
 * FUZZ_RUNS (default 150) sets the runs per property, FUZZ_SEED the seed (fixed by default);
 * fast-check prints the seed, path and shrunk counterexample of a failure. FUZZ_STATS=1 prints how
 * the answers of each property were distributed (status and error code).
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import {
  errorShapeProblems, fuzzParameters, fuzzRoutes, fuzzSettings, headerProblems, hostileBodyArb, hostileHeadersArb, leakIn, nestedBodyArb, pathSegmentArb,
  queryArb, rawHttp, sseProblems, validishBodyArb, type FuzzRoute, type RawResponse,
} from '../helpers/fuzz.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ROUTES = fuzzRoutes();
const { numRuns, seed } = fuzzSettings();
/** A small balance: cheap models fit, expensive or long requests get 402. */
const BALANCE_USD = '0.10';

describeStore('fuzz: every route against its request schema', () => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway();
    await t.clearFaults();
  });
  afterAll(async () => { await t?.dispose(); });

  it('covers every route of the route table', () => {
    // Every POST route is fuzzed (the loop below runs over the route table, so a new route is covered).
    const posts = ROUTES.filter((r) => r.method === 'POST').map((r) => r.path);
    expect(posts).toEqual(expect.arrayContaining(['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/rerank', '/v1/translate']));
    for (const route of ROUTES.filter((r) => r.method === 'POST')) expect(route.requestSchema, route.id).not.toBeNull();
    expect(ROUTES.filter((r) => r.method === 'GET' && r.params.length > 0).map((r) => r.path).sort()).toEqual(['/v1/models', '/v1/models/{model}']);
  });

  /** The account once no hold is open: spendable balance and newest usage row. */
  async function settledState(accountId: string): Promise<{ balanceNano: bigint; lastRow: string | null }> {
    const ledger = t.gw.runtime.ledger;
    for (let i = 0; i < 100; i++) {
      const account = (await ledger.getAccount(accountId))!;
      if (account.openHolds === 0) {
        const usage = await ledger.listUsage(accountId, { limit: 1 });
        return { balanceNano: account.balanceNano, lastRow: usage.data[0]?.id ?? null };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('(c) a hold stayed open for 2 s after the answer');
  }

  function versionHeaders(route: FuzzRoute): Array<{ name: string; aliases: string[]; values: string[] }> {
    const compiled = t.gw.generation().gateway.routes.find((r) => r.manifest.id === route.id);
    return (compiled?.requiredHeaders ?? []).map((h) => ({ name: h.name, aliases: h.aliases, values: [...h.values] }));
  }

  function baseHeaders(route: FuzzRoute, key: string): Record<string, string> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    for (const h of versionHeaders(route)) headers[h.name] = h.values[0]!;
    return headers;
  }

  const excerpt = (text: string): string => (text.length > 400 ? `${text.slice(0, 400)}... (${text.length} chars)` : text);

  /** Answers seen per property (status and error code), printed with FUZZ_STATS=1. */
  let stats = new Map<string, number>();
  const record = (res: RawResponse): void => {
    let code = '';
    if (res.status >= 400) {
      try { const e = (JSON.parse(res.body) as { error?: { code?: unknown; message?: string } }).error; code = String(e?.code ?? '') + (process.env.FUZZ_STATS === '2' ? ` ${String(e?.message).slice(0, 70)}` : ''); } catch { code = 'not-json'; }
    } else if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) code = 'sse';
    const key = `${res.status}${code ? ` ${code}` : ''}`;
    stats.set(key, (stats.get(key) ?? 0) + 1);
  };
  beforeEach(() => { stats = new Map(); });
  afterEach((context) => {
    if (process.env.FUZZ_STATS && stats.size > 0) console.log(`${context.task.name}: ${[...stats].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} x${n}`).join(', ')}`);
  });

  /** Sends one request and checks properties (a)-(d); throws with every problem found. */
  async function exercise(route: FuzzRoute, account: { id: string; key: string }, request: { path: string; headers: Record<string, string>; body?: string; label?: string }): Promise<void> {
    const before = await settledState(account.id);
    let res: RawResponse;
    try {
      res = await rawHttp(t.url, { method: route.method, path: request.path, headers: request.headers, body: request.body });
    } catch (error) {
      throw new Error(`${route.method} ${request.path}: no answer (${(error as Error).message})\nbody: ${excerpt(request.body ?? '')}`);
    }
    record(res);
    const problems: string[] = [];
    if (res.status >= 500) problems.push(`(a) ${res.status}: a 5xx without faults is the gateway's own failure`);
    problems.push(...headerProblems(res, { requireRequestId: false }).map((p) => `(d) ${p}`));
    const type = res.headers['content-type'] ?? '';
    if (res.status >= 400) {
      if (!type.startsWith('application/json')) problems.push(`(b) error content-type ${JSON.stringify(type)}`);
      problems.push(...errorShapeProblems(route.shape, res.body).map((p) => `(b) ${p}`));
      const leak = leakIn(res.body);
      if (leak) problems.push(`(d) ${leak}`);
      if (res.body.includes(account.key)) problems.push('(d) the error body echoes the client key');
    } else if (type.startsWith('text/event-stream')) {
      problems.push(...sseProblems(res.body).map((p) => `(b) ${p}`));
    } else {
      try { JSON.parse(res.body); } catch { problems.push(`(b) a ${res.status} body is not JSON`); }
    }
    const after = await settledState(account.id);
    if (res.status >= 400 || !route.billable) {
      if (after.balanceNano !== before.balanceNano) problems.push(`(c) a ${res.status} on ${route.id} moved the balance by ${after.balanceNano - before.balanceNano} nano-USD`);
      if (after.lastRow !== before.lastRow) problems.push(`(c) a ${res.status} on ${route.id} wrote usage row ${after.lastRow}`);
    }
    if (problems.length > 0) {
      throw new Error(`${route.method} ${request.path}${request.label ? ` [${request.label}]` : ''} -> ${res.status}\n${problems.join('\n')}\nresponse: ${excerpt(res.body)}\nrequest headers: ${JSON.stringify(request.headers)}\nrequest body: ${excerpt(request.body ?? '')}`);
    }
  }

  /** Each property has 100 s for its cases (the test allows 150 s); running out of time fails it. */
  const options = (runs = numRuns): fc.Parameters<unknown> => fuzzParameters({ numRuns: runs, seed, timeLimitMs: 100_000 });

  for (const route of ROUTES.filter((r) => r.method === 'POST')) {
    it(`${route.id}: bodies built from the request schema`, async () => {
      const account = await t.account(BALANCE_USD);
      await fc.assert(fc.asyncProperty(validishBodyArb(route), async (body) => {
        await exercise(route, account, { path: route.path, headers: { ...baseHeaders(route, account.key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      }), options());
    }, 150_000);

    it(`${route.id}: hostile bodies and headers`, async () => {
      const account = await t.account(BALANCE_USD);
      await fc.assert(fc.asyncProperty(hostileBodyArb(route), hostileHeadersArb(versionHeaders(route)), async (body, headers) => {
        await exercise(route, account, { path: route.path, headers: { authorization: `Bearer ${account.key}`, ...headers }, body: body.text, label: body.label });
      }), options());
    }, 150_000);

    it(`${route.id}: deeply nested JSON`, async () => {
      const account = await t.account(BALANCE_USD);
      await fc.assert(fc.asyncProperty(nestedBodyArb(route, 12_000), async (body) => {
        await exercise(route, account, { path: route.path, headers: { ...baseHeaders(route, account.key), 'content-type': 'application/json' }, body: body.text, label: body.label });
      }), options(Math.max(1, Math.ceil(numRuns / 3))));
    }, 150_000);
  }

  for (const route of ROUTES.filter((r) => r.method === 'GET' && r.params.length > 0)) {
    it(`${route.id}: path and query parameters`, async () => {
      const account = await t.account(BALANCE_USD);
      const queryNames = route.params.filter((p) => p.in === 'query').map((p) => p.name);
      const pathNames = route.params.filter((p) => p.in === 'path').map((p) => p.name);
      const segments = fc.tuple(...pathNames.map(() => pathSegmentArb));
      const query = queryNames.length > 0 ? queryArb(queryNames) : fc.constant('');
      await fc.assert(fc.asyncProperty(segments, query, async (values, q) => {
        let path = route.path;
        pathNames.forEach((name, i) => { path = path.replace(`{${name}}`, values[i]!); });
        await exercise(route, account, { path: q ? `${path}?${q}` : path, headers: baseHeaders(route, account.key) });
      }), options());
    }, 150_000);
  }
});
