/**
 * Sends requests to upstreams over one undici Pool per origin and timeout set. Transport failures
 * become GatewayErrors (refused: 503, timeouts: 504) so no provider-specific code is needed here.
 */
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import type { CompiledProvider } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { authHeaders } from './auth.js';

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

  /** POSTs (or GETs) a JSON body to one of the provider's operations. */
  async send(provider: CompiledProvider, operation: string, body: unknown, signal: AbortSignal, extraHeaders: Record<string, string> = {}): Promise<UpstreamResponse> {
    const op = provider.operations[operation];
    if (!op) throw new GatewayError('internal_error', 'The route names an operation its provider does not have.');
    const url = this.target(provider.baseUrl + op.path);
    // Serialized before the transport: a body that cannot be sent is the gateway's fault, not an unreachable upstream.
    const payload = op.method === 'GET' ? null : JSON.stringify(body);
    // undici checks headersTimeout on a coarse (1 s) clock; the manifest's headers_ms is enforced here exactly.
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    if (signal.aborted) forward(); else signal.addEventListener('abort', forward, { once: true });
    const timer = setTimeout(() => controller.abort(new undiciErrors.HeadersTimeoutError()), provider.timeouts.headersMs);
    try {
      const response = await this.pool(provider, url.origin).request({
        method: op.method, path: url.path, signal: controller.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extraHeaders, ...provider.headers, ...authHeaders(provider) },
        body: payload,
      });
      return { status: response.statusCode, headers: flatHeaders(response.headers), body: response.body };
    } catch (error) {
      throw transportError(controller.signal.aborted && !signal.aborted ? controller.signal.reason : error);
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
