/**
 * A deterministic upstream speaking the OpenAI chat-completions wire format, on plain node:http.
 * Routes: POST /v1/chat/completions, GET /v1/models, and the control API under /__sim/
 * (faults, last request, stats, reset). See chat.ts for the answer and faults.ts for fault injection.
 */
import http from 'node:http';
import { answerChat, completionBody, streamEvents, validateChatRequest, type SimAnswer } from './chat.js';
import { FaultStore, parseFaultBody, type SimFault } from './faults.js';

export type { SimFault } from './faults.js';

/** A running simulator. */
export interface Simulator {
  readonly port: number;
  /** Base URL without path, e.g. `http://127.0.0.1:8089`; the OpenAI base URL is `url + '/v1'`. */
  readonly url: string;
  /** Chat-completion requests received since start or the last `POST /__sim/reset`. */
  readonly requests: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Options of `startSimulator`. */
export interface SimulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Fixed latency before every chat answer's headers, for benchmarks. */
  latencyMs?: number;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const ERROR_EVENT = `data: ${JSON.stringify({ error: { message: 'simulated upstream error', type: 'server_error', code: 'upstream_error' } })}\n\n`;

type Json = Record<string, unknown>;

function errorBody(message: string, type: string, param: string | null = null, code: string | null = null): Json {
  return { error: { message, type, param, code } };
}

/** The OpenAI-shaped error body and extra headers for a fault status. */
function faultResponse(status: number): { body: Json; headers: http.OutgoingHttpHeaders } {
  if (status === 429) {
    return { body: errorBody('Rate limit reached (simulated).', 'rate_limit_exceeded', null, 'rate_limit_exceeded'), headers: { 'retry-after': '7' } };
  }
  if (status >= 500) return { body: errorBody(`The server had an error while processing your request (simulated ${status}).`, 'server_error'), headers: {} };
  const kinds: Record<number, [string, string | null]> = {
    401: ['authentication_error', 'invalid_api_key'], 403: ['permission_error', null], 404: ['invalid_request_error', 'model_not_found'],
  };
  const [type, code] = kinds[status] ?? ['invalid_request_error', null];
  return { body: errorBody(`Simulated error (status ${status}).`, type, null, code), headers: {} };
}

/** Starts a simulator listening on `opts.port` (0 = random) and resolves once it accepts connections. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const faults = new FaultStore();
  const sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let requests = 0;
  let last: { headers: http.IncomingHttpHeaders; body: unknown } | null = null;
  let closing = false;

  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const entry = { timer: setTimeout(() => { sleeping.delete(entry); resolve(); }, ms), resolve };
    sleeping.add(entry);
  });

  const server = http.createServer((req, res) => {
    let gone = false;
    const closed = new Promise<void>((resolve) => res.once('close', () => { gone = true; resolve(); }));
    res.on('error', () => { gone = true; });
    const isGone = () => gone || closing || res.destroyed || res.writableEnded;

    const sendJson = (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
      if (isGone()) return;
      const data = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers });
      res.end(data);
    };

    /** Writes the stream chunks, applying the chunk-level faults. */
    const stream = async (answer: SimAnswer, includeUsage: boolean, fault: SimFault, requestId: string) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
      res.flushHeaders();
      const events = streamEvents(answer, includeUsage);
      const truncate = fault.truncate_after_chunks;
      const errorAfter = fault.error_after_chunks;
      const mode = truncate !== undefined && (errorAfter === undefined || truncate < errorAfter) ? 'truncate' : errorAfter !== undefined ? 'error' : 'done';
      const limit = Math.min(events.length, mode === 'truncate' ? truncate! : mode === 'error' ? errorAfter! : events.length);
      let flushed: Promise<void> = Promise.resolve();
      for (let i = 0; i < limit; i++) {
        if (fault.chunk_delay_ms && i > 0) await sleep(fault.chunk_delay_ms);
        if (isGone()) return;
        // Each event is its own write (flushed as written); only a truncation waits for the last one.
        let ok: boolean = true;
        if (mode === 'truncate' && i === limit - 1) flushed = new Promise<void>((done) => { ok = res.write(events[i]!, () => done()); });
        else ok = res.write(events[i]!);
        if (!ok) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
      }
      if (isGone()) return;
      if (mode === 'truncate') {
        await Promise.race([flushed, closed]);
        res.destroy();
      } else if (mode === 'error') {
        res.end(ERROR_EVENT);
      } else {
        res.end('data: [DONE]\n\n');
      }
    };

    const chat = async (raw: string) => {
      requests += 1;
      let body: unknown = raw;
      let parsed = true;
      try { body = JSON.parse(raw); } catch { parsed = false; }
      last = { headers: req.headers, body };
      const record = typeof body === 'object' && body !== null ? (body as Json) : {};
      const fault: SimFault = faults.take(typeof record.model === 'string' ? record.model : undefined) ?? {};
      const wait = (opts.latencyMs ?? 0) + (fault.latency_ms ?? 0);
      if (wait > 0) await sleep(wait);
      if (isGone()) return;
      if (fault.status !== undefined) {
        const { body: errBody, headers } = faultResponse(fault.status);
        return sendJson(fault.status, errBody, headers);
      }
      if (!parsed) return sendJson(400, errorBody('We could not parse the JSON body of your request.', 'invalid_request_error'));
      const valid = validateChatRequest(body);
      if (!valid.ok) return sendJson(400, errorBody(valid.error.message, 'invalid_request_error', valid.error.param, valid.error.code));
      const answer = answerChat(valid.value, raw);
      if (!answer.ok) return sendJson(400, errorBody(answer.error.message, 'invalid_request_error', answer.error.param, answer.error.code));
      const requestId = `req_sim_${answer.value.id.slice('chatcmpl-sim'.length)}`;
      if (valid.value.stream !== true) return sendJson(200, completionBody(answer.value, fault.omit_usage === true), { 'x-request-id': requestId });
      const includeUsage = valid.value.stream_options?.include_usage === true && fault.omit_usage !== true;
      await stream(answer.value, includeUsage, fault, requestId);
    };

    const control = (method: string, path: string, raw: string) => {
      let body: unknown;
      try { body = raw === '' ? undefined : JSON.parse(raw); } catch { return sendJson(400, errorBody('invalid JSON body', 'invalid_request_error')); }
      if (path === '/__sim/faults' && method === 'GET') return sendJson(200, { object: 'list', data: faults.list() });
      if (path === '/__sim/faults' && method === 'DELETE') return sendJson(200, { deleted: faults.clear() });
      if (path === '/__sim/faults' && method === 'POST') {
        const parsedFault = parseFaultBody(body);
        if (typeof parsedFault === 'string') return sendJson(400, errorBody(parsedFault, 'invalid_request_error', 'fault'));
        return sendJson(200, faults.add(parsedFault.model, parsedFault.fault));
      }
      if (path === '/__sim/reset' && method === 'POST') {
        faults.clear();
        requests = 0;
        last = null;
        return sendJson(200, { ok: true });
      }
      if (path === '/__sim/last' && method === 'GET') {
        return last ? sendJson(200, last) : sendJson(404, errorBody('no chat request received yet', 'invalid_request_error'));
      }
      if (path === '/__sim/stats' && method === 'GET') return sendJson(200, { requests, faults: faults.list().length });
      return notFound(method, path);
    };

    const notFound = (method: string, path: string) =>
      sendJson(404, errorBody(`Unknown request URL: ${method} ${path}.`, 'invalid_request_error', null, 'unknown_url'));

    const chunks: Buffer[] = [];
    let size = 0;
    req.on('error', () => { gone = true; });
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return sendJson(413, errorBody('Request body too large.', 'invalid_request_error'));
      const raw = Buffer.concat(chunks).toString('utf8');
      const method = req.method ?? 'GET';
      const path = (req.url ?? '/').split('?')[0]!;
      const route = async () => {
        if (path === '/v1/chat/completions' && method === 'POST') return chat(raw);
        if (path === '/v1/models' && method === 'GET') return sendJson(200, { object: 'list', data: [] });
        if (path.startsWith('/__sim/')) return control(method, path, raw);
        return notFound(method, path);
      };
      route().catch((err: unknown) => {
        if (!res.headersSent) sendJson(500, errorBody(`simulator bug: ${String(err)}`, 'server_error'));
        else res.destroy();
      });
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => { server.off('error', reject); resolve(); });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    port,
    url: `http://${urlHost}:${port}`,
    get requests() { return requests; },
    close: () => new Promise<void>((resolve, reject) => {
      closing = true;
      for (const entry of sleeping) { clearTimeout(entry.timer); entry.resolve(); }
      sleeping.clear();
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }),
  };
}
