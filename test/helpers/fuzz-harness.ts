/**
 * The harness the fuzz files share (test/e2e/fuzz*.test.ts): one request over raw HTTP against a
 * started test gateway, and the properties every answer must have, whatever the route's kind.
 */
import type { TestGateway } from './gateway.js';
import { errorFields, errorShapeProblems, fuzzRoutes, headerProblems, leakIn, rawHttp, shapeOf, sseProblems, type ErrorShape, type FuzzRoute, type RawResponse } from './fuzz.js';
import { preRoutingError, type RequiredHeaderSpec } from './fuzz-requests.js';
import { sampleRequest } from './route-samples.js';

/** One fuzzed request; `method` defaults to the route's. */
export interface FuzzRequest { method?: string; path: string; headers: Record<string, string>; body?: string | Buffer; label?: string }

/** What the properties need of a test gateway, and the checks shared by the fuzz files. */
export interface FuzzHarness {
  /** The compiled route's required headers (the version header and its aliases). */
  requiredHeaders(route: FuzzRoute): RequiredHeaderSpec[];
  /**
   * The route a request path reaches, as the gateway's own router matches it: the fuzzed route, another
   * one (an empty id turning /v1/files/{file_id} into /v1/files), or none (a parameter past the
   * router's length limit: then the answer is the gateway's "no route" 404 in its default shape).
   */
  routeOf(method: string, path: string): { id: string; shape: ErrorShape } | null;
  /** Authorization and every required header with its first accepted value. */
  baseHeaders(route: FuzzRoute, key: string): Record<string, string>;
  /**
   * Sends one request and checks, throwing with every problem found:
   *  (a) no 5xx; (b) an error is JSON in the route's shape, a success JSON, SSE with JSON frames, or the declared media type;
   *  (c) a 4xx (and anything on a free route) changes no balance, writes no usage row, leaves no hold;
   *  (d) no stack trace, internal path or client key in an error, no malformed or unknown header line;
   *  (e) a route that calls no upstream (see callsUpstream) makes no upstream call, whatever it answers;
   *  plus `check`'s own problems (`here`: the request reached `route`, see routeOf; `upstreamCalls` it caused).
   * The shape and upstreams checked are those of the route the path reaches.
   */
  exercise(route: FuzzRoute, account: { id: string; key: string }, request: FuzzRequest, check?: (res: RawResponse, here: boolean, upstreamCalls: number) => string[]): Promise<RawResponse>;
  /**
   * Whether a route calls an upstream: one the route table names upstreams for does; another (answered
   * by the gateway itself) does when its sample request (test/helpers/route-samples.ts) made an upstream
   * call, e.g. a file upload stored at the vendor's Files API. Measured once per route.
   */
  callsUpstream(routeId: string): Promise<boolean>;
  /** Answers seen (status and error code), for FUZZ_STATS. */
  stats: Map<string, number>;
}

const excerpt = (text: string | Buffer | undefined): string => {
  const s = text === undefined ? '' : text.toString();
  return s.length > 400 ? `${s.slice(0, 400)}... (${s.length} chars)` : s;
};

/** The fuzz harness over a started test gateway (`gateway` is read at each call: the gateway starts in beforeAll). */
export function fuzzHarness(gateway: () => TestGateway): FuzzHarness {
  const stats = new Map<string, number>();
  const record = (res: RawResponse): void => {
    let code = '';
    if (res.status >= 400) {
      try { JSON.parse(res.body); const e = errorFields(res.body); code = String(e.code ?? '') + (process.env.FUZZ_STATS === '2' ? ` ${String(e.message).slice(0, 70)}` : ''); } catch { code = 'not-json'; }
    } else if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) code = 'sse';
    const key = `${res.status}${code ? ` ${code}` : ''}`;
    stats.set(key, (stats.get(key) ?? 0) + 1);
  };
  async function settledState(accountId: string): Promise<{ balanceNano: bigint; lastRow: string | null }> {
    const ledger = gateway().gw.runtime.ledger;
    for (let i = 0; i < 100; i++) {
      const account = await gateway().settled(accountId);
      if (account.openHolds === 0) {
        const usage = await ledger.listUsage(accountId, { limit: 1 });
        return { balanceNano: account.balanceNano, lastRow: usage.data[0]?.id ?? null };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('(c) a hold stayed open for 2 s after the answer');
  }
  const requiredHeaders = (route: FuzzRoute): RequiredHeaderSpec[] => {
    const compiled = gateway().gw.generation().gateway.routes.find((r) => r.manifest.id === route.id);
    return (compiled?.requiredHeaders ?? []).map((h) => ({ name: h.name, aliases: h.aliases, values: [...h.values] }));
  };
  const routes = new Map(fuzzRoutes().map((r) => [r.id, r]));
  const routeOf = (method: string, path: string): { id: string; shape: ErrorShape } | null => {
    let found: ReturnType<ReturnType<TestGateway['gw']['generation']>['match']> = null;
    try { found = gateway().gw.generation().match(method, path.split('?')[0]!); } catch { found = null; }
    return found ? { id: found.pipeline.route.manifest.id, shape: shapeOf(found.pipeline.route.manifest.format) } : null;
  };
  const measured = new Map<string, Promise<boolean>>();
  const callsUpstream = (routeId: string): Promise<boolean> => {
    const route = routes.get(routeId);
    if (!route || route.hasUpstream) return Promise.resolve(true);
    if (!measured.has(routeId)) {
      measured.set(routeId, (async () => {
        const t = gateway();
        const account = await t.account('1');
        const req = await sampleRequest({ t, account }, route);
        const before = t.sim.requests;
        const res = await rawHttp(t.url, req);
        if (res.status !== 200) throw new Error(`the sample of ${routeId} answered ${res.status}: ${res.body.slice(0, 300)}`);
        return t.sim.requests !== before;
      })());
    }
    return measured.get(routeId)!;
  };
  return {
    stats,
    requiredHeaders,
    routeOf,
    callsUpstream,
    baseHeaders(route, key) {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      for (const h of requiredHeaders(route)) headers[h.name] = h.values[0]!;
      return headers;
    },
    async exercise(route, account, request, check) {
      const t = gateway();
      const method = request.method ?? route.method;
      const target = routeOf(method, request.path);
      const upstreamless = target ? !(await callsUpstream(target.id)) : true;
      const before = await settledState(account.id);
      const upstreamCalls = t.sim.requests;
      let res: RawResponse;
      try {
        res = await rawHttp(t.url, { method, path: request.path, headers: request.headers, body: request.body });
      } catch (error) {
        throw new Error(`${method} ${request.path}: no answer (${(error as Error).message})\nbody: ${excerpt(request.body)}`);
      }
      record(res);
      const here = target?.id === route.id;
      const problems: string[] = [];
      if (res.status >= 500) problems.push(`(a) ${res.status}: a 5xx without faults is the gateway's own failure`);
      problems.push(...headerProblems(res, { requireRequestId: false }).map((p) => `(d) ${p}`));
      const type = res.headers['content-type'] ?? '';
      if (res.status >= 400) {
        if (!type.startsWith('application/json')) problems.push(`(b) error content-type ${JSON.stringify(type)}`);
        problems.push(...errorShapeProblems(preRoutingError(res.body) || !target ? 'openai' : target.shape, res.body).map((p) => `(b) ${p}`));
        const leak = leakIn(res.body);
        if (leak) problems.push(`(d) ${leak}`);
        if (res.body.includes(account.key)) problems.push('(d) the error body echoes the client key');
      } else if (type.startsWith('text/event-stream')) {
        problems.push(...sseProblems(res.body).map((p) => `(b) ${p}`));
      } else if (type.startsWith('application/json')) {
        try { JSON.parse(res.body); } catch { problems.push(`(b) a ${res.status} body is not JSON`); }
      } else if (route.answerTypes.length > 0 && !route.answerTypes.some((media) => media === '*/*' || type.startsWith(media))) {
        problems.push(`(b) a ${res.status} answered ${JSON.stringify(type)}; the OpenAPI document declares ${route.answerTypes.join(', ')}`);
      }
      const calls = t.sim.requests - upstreamCalls;
      if (upstreamless && calls !== 0) problems.push(`(e) a ${res.status} on ${target?.id ?? 'no route'}, which calls no upstream, made ${calls} upstream call(s)`);
      const after = await settledState(account.id);
      if (res.status >= 400 || !route.billable) {
        if (after.balanceNano !== before.balanceNano) problems.push(`(c) a ${res.status} on ${route.id} moved the balance by ${after.balanceNano - before.balanceNano} nano-USD`);
        if (after.lastRow !== before.lastRow) problems.push(`(c) a ${res.status} on ${route.id} wrote usage row ${after.lastRow}`);
      }
      if (check) problems.push(...check(res, here, calls));
      if (problems.length > 0) {
        throw new Error(`${method} ${request.path.length > 300 ? `${request.path.slice(0, 300)}...` : request.path}${request.label ? ` [${request.label}]` : ''} -> ${res.status} (reaches ${target?.id ?? 'no route'})\n${problems.join('\n')}\nresponse: ${excerpt(res.body)}\nrequest headers: ${JSON.stringify(request.headers)}\nrequest body: ${excerpt(request.body)}`);
      }
      return res;
    },
  };
}
