/**
 * Sends requests to upstreams over one undici Pool per origin and timeout set. Transport failures
 * become GatewayErrors (refused: 503, timeouts: 504) so no provider-specific code is needed here.
 */
import { FormData, Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { Cancellation, type CancelSignal } from '../cancel.js';
import type { BodyEdits, CompiledOperation, CompiledProvider, UpstreamRequestKind } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { AttemptError } from './attempt-error.js';
import { authHeaders, forgetToken, tokenAuthHeaders } from './auth.js';
import { TokenUnavailable } from './token-unavailable.js';
import type { PoolKey } from './key-pool.js';
import { RawBody } from './raw-body.js';
import { sigV4Headers } from './sigv4-auth.js';
import { allowedVendorUrl } from './vendor-url.js';

/** An upstream answer whose body has not been read yet. */
export interface UpstreamResponse { status: number; headers: Record<string, string>; body: Dispatcher.ResponseData['body']; }

function flatHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** Maps a transport error from undici to the gateway's error table. */
export function transportError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.ConnectTimeoutError) {
    return new GatewayError('upstream_timeout', 'The upstream provider did not answer in time.');
  }
  if (error instanceof undiciErrors.BodyTimeoutError) return new GatewayError('upstream_timeout', 'The upstream provider stopped sending.');
  return new GatewayError('upstream_unavailable', 'The upstream provider could not be reached.');
}

/**
 * A request's send that failed before any answer, as an AttemptError saying how (issue 29 item 3): a
 * headers timeout is a silent upstream, no access token a `token` failure (`token_refused` when the
 * token endpoint refused the credential), anything else a connect failure (refused, reset, unreachable). Only the operation's own send is an attempt: a poll or a
 * download inside it is not retried whole.
 */
function sendFailure(error: unknown): GatewayError {
  if (error instanceof TokenUnavailable) return new AttemptError(error.transient ? 'token' : 'token_refused', error);
  // The attempt's own signal may carry its reason (a timer of the attempt loop): that is the loop's to classify.
  if (error instanceof GatewayError) return error;
  return new AttemptError(error instanceof undiciErrors.HeadersTimeoutError ? 'headers_timeout' : 'connect', transportError(error));
}

/** What a request adds to its operation's URL: path parameters and query parameters. */
export interface UpstreamTarget {
  pathParams?: Readonly<Record<string, string>> | null;
  query?: Record<string, string[]> | null;
  /** Features of the operation this request uses: their headers are added (provider manifest `features`). */
  features?: readonly string[];
  /** The credential of the provider's pool to send (issue 29 item 2); default: the pool's first usable. */
  key?: PoolKey | null;
  /** Waits for the answer's headers at most this long (the request's deadline), if less than the provider's headers_ms. */
  headersTimeoutMs?: number;
  /** The attempt's trace context (`traceparent`, `tracestate`), sent only when traces are on (issue 33 item 1). */
  traceHeaders?: Readonly<Record<string, string>>;
  /** The request streams: an operation with a `streamPath` is sent there instead of its `path`. */
  stream?: boolean;
}

/** The operation's static headers plus those of each feature used; same-named ones joined with a comma. */
function operationHeaders(op: CompiledOperation, features: readonly string[] | undefined): Readonly<Record<string, string>> {
  if (!features?.length) return op.headers;
  const out: Record<string, string> = { ...op.headers };
  for (const feature of features) {
    for (const [name, value] of Object.entries(op.features[feature] ?? {})) out[name] = out[name] ? `${out[name]},${value}` : value;
  }
  return out;
}

/** The operation path with each `{name}` (as the URL parser encoded it) replaced by its URL-encoded value. */
function fillPath(path: string, params: Readonly<Record<string, string>>): string {
  return path.replace(/%7B([^%/]+)%7D|\{([^}/]+)\}/gi, (whole, encoded?: string, plain?: string) => {
    const value = params[encoded ?? plain ?? ''];
    // `@` is a path character (RFC 3986 pchar), left as is: a vendor's versioned model id (`name@date`).
    return value === undefined ? whole : encodeURIComponent(value).replace(/%40/g, '@');
  });
}

/** `path` with the request's own query parameters appended (after the operation's static ones). */
function withQuery(path: string, query: Record<string, string[]>): string {
  const params = new URLSearchParams();
  for (const [name, values] of Object.entries(query)) for (const value of values) params.append(name, value);
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/** The kind of body a translation produced: a FormData is multipart, a RawBody raw, anything else JSON. */
function bodyKind(body: unknown): UpstreamRequestKind {
  return body instanceof FormData ? 'multipart' : body instanceof RawBody ? 'raw' : 'json';
}

/**
 * The wire payload of a POST, of the kind its operation declares (provider manifest `request`; issue
 * 9 point 3). A translation that produced another kind is the gateway's fault: refused before
 * anything is sent (never a mismatched body upstream), naming the operation. Serialized before the
 * transport, so a body that cannot be sent is not mistaken for an unreachable upstream.
 */
function payloadOf(name: string, op: CompiledOperation, body: unknown): string | FormData | RawBody {
  const declared = op.request;
  const produced = bodyKind(body);
  if (produced !== declared) {
    throw new GatewayError('internal_error', `The gateway's operation "${name}" declares a ${declared} request body, but its translation produced ${produced}; nothing was sent upstream.`);
  }
  if (body instanceof FormData || body instanceof RawBody) return body;
  return JSON.stringify(op.bodyEdits ? edited(body, op.bodyEdits) : body);
}

/** A copy of a JSON object body with the operation's edits (the translation's own body is left as it is, for a retry). */
function edited(body: unknown, edits: BodyEdits): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of edits.remove) delete out[field];
  return Object.assign(out, edits.set);
}

/**
 * The signature headers of a sigv4 provider's request (src/upstream/sigv4-auth.ts), over exactly what
 * is sent: the method, the path and query, every header above and the body's bytes. Without a usable
 * key (a real provider's pool exhausted) nothing is signed, and the vendor answers its own 403.
 */
function signedHeaders(
  provider: CompiledProvider, method: string, origin: string, path: string, headers: Readonly<Record<string, string>>, body: string | FormData | Uint8Array | null, target: UpstreamTarget,
): Record<string, string> {
  if (body instanceof FormData) throw new GatewayError('internal_error', `Provider ${provider.id} signs its requests (sigv4), which a multipart body cannot be; nothing was sent upstream.`);
  const key = target.key ?? provider.keys.any();
  return sigV4Headers(provider.sigv4!, key, { method, url: new URL(path, origin), headers: { ...headers }, body }) ?? {};
}

/** Connection pools to every upstream origin. */
export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  /** Parsed operation URLs by their text (parsing one per request showed up in profiles). */
  private readonly targets = new Map<string, { origin: string; path: string }>();

  private target(url: string): { origin: string; path: string } {
    let target = this.targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: parsed.pathname + parsed.search };
      if (this.targets.size >= 10_000) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  private pool(provider: CompiledProvider, origin: string): Pool {
    const t = provider.timeouts;
    const key = `${origin}|${t.connectMs}|${t.headersMs}|${t.idleMs}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(origin, { connect: { timeout: t.connectMs }, headersTimeout: t.headersMs, bodyTimeout: t.idleMs, keepAliveTimeout: 30_000, pipelining: 1 });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** POSTs (or GETs, DELETEs) to one of the provider's operations, with a body of the kind the operation declares (JSON, multipart or raw). */
  async send(provider: CompiledProvider, operation: string, body: unknown, signal: CancelSignal, target: UpstreamTarget = {}): Promise<UpstreamResponse> {
    const op = provider.operations[operation];
    if (!op) throw new GatewayError('internal_error', 'The route names an operation its provider does not have.');
    const url = this.target(provider.baseUrl + (target.stream && op.streamPath ? op.streamPath : op.path) + op.query);
    let path = target.pathParams ? fillPath(url.path, target.pathParams) : url.path;
    if (target.query) path = withQuery(path, target.query);
    // A multipart body (FormData) carries its own content type, with its boundary; raw bytes carry theirs.
    const payload = op.method !== 'POST' ? null : payloadOf(operation, op, body);
    // A binary answer (a file download) accepts any type: a vendor that declares only application/octet-stream refuses JSON-only Accept (406).
    let headers = op.binary ? { accept: '*/*', ...operationHeaders(op, target.features) } : operationHeaders(op, target.features);
    if (target.traceHeaders) headers = { ...headers, ...target.traceHeaders };
    return this.request(provider, op.method, url.origin, path, payload, signal, headers, target, sendFailure);
  }

  /**
   * GETs a URL the provider gave (a job to poll), with the provider's credential. Only on the provider's
   * own origin or, over https, on a host the poll declares (`hosts`, src/upstream/vendor-url.ts): a
   * vendor answer never sends the gateway, with its credential, anywhere else.
   */
  async poll(provider: CompiledProvider, url: string, signal: CancelSignal, hosts: readonly string[] = []): Promise<UpstreamResponse> {
    const target = allowedVendorUrl(url, provider.baseUrl, hosts, 'job location');
    return this.request(provider, 'GET', target.origin, target.pathname + target.search, null, signal);
  }

  private async request(
    provider: CompiledProvider, method: 'GET' | 'POST' | 'DELETE', origin: string, path: string, payload: string | FormData | RawBody | null, signal: CancelSignal,
    requestHeaders: Readonly<Record<string, string>> = {}, target: UpstreamTarget = {}, failure: (error: unknown) => GatewayError = transportError,
  ): Promise<UpstreamResponse> {
    const contentType: Record<string, string> = typeof payload === 'string' ? { 'content-type': 'application/json' }
      : payload instanceof RawBody ? { 'content-type': payload.contentType } : {};
    // undici checks headersTimeout on a coarse (1 s) clock; the manifest's headers_ms is enforced here exactly.
    const controller = new Cancellation();
    const forward = (): void => controller.abort(signal.reason);
    // The caller's signal outlives this call (a job polled many times inside one request): the listener
    // goes once the answer's body closes (ended, or destroyed), or at once when the call fails.
    const unforward = (): void => signal.removeEventListener('abort', forward);
    if (signal.aborted) forward(); else signal.addEventListener('abort', forward, { once: true });
    const headersMs = Math.min(provider.timeouts.headersMs, target.headersTimeoutMs ?? Infinity);
    const timer = setTimeout(() => controller.abort(new undiciErrors.HeadersTimeoutError()), headersMs);
    try {
      // A credential exchanged for a token first (a service account) waits for it here; a failure is a clean 502.
      const auth = provider.auth.tokens ? await tokenAuthHeaders(provider, target.key, controller) : authHeaders(provider, target.key);
      const headers: Record<string, string> = { ...contentType, accept: 'application/json, text/event-stream', ...provider.headers, ...requestHeaders, ...auth };
      const body = payload instanceof RawBody ? payload.data : payload;
      if (provider.sigv4) Object.assign(headers, signedHeaders(provider, method, origin, path, headers, body, target));
      const response = await this.pool(provider, origin).request({
        // undici takes any signal with addEventListener/removeEventListener (api-request.js); a
        // Cancellation, not an AbortSignal, so that the request is collected young (src/cancel.ts).
        method, path, signal: controller as unknown as AbortSignal, headers, body,
      });
      response.body.once('close', unforward);
      if (response.statusCode === 401 && provider.auth.tokens) forgetToken(provider, target.key, auth);
      return { status: response.statusCode, headers: flatHeaders(response.headers), body: response.body };
    } catch (error) {
      unforward();
      throw failure(controller.aborted && !signal.aborted ? controller.reason : error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes every pool. */
  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}
