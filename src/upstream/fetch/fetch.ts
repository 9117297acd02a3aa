/**
 * The one SSRF-safe fetcher for public URLs given as inputs (video `image`, later OCR and vision
 * `url`), issue 11 item 7. Per hop: the URL rules (url.ts), then the host is resolved once through
 * the injectable resolver and every address is judged (addresses.ts); the connection's own `lookup`
 * answers only those checked addresses, so DNS rebinding between check and connect is impossible,
 * and a refused host never reaches undici (no socket is created). Redirects are followed by hand (at
 * most 3, each hop judged afresh); total time and size are capped; only a fixed User-Agent and
 * Accept are sent (no cookies, credentials or client headers). Every failure is the client's 400.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { GatewayError } from '../../errors.js';
import { canonicalAddress, refusedAddressReason } from './addresses.js';
import { allowHostSet, parseUrlInput, urlInputError, type UrlTarget } from './url.js';

/** Resolves a hostname to every address it has (the system resolver unless one is injected). */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

/** dns.lookup with `all: true`: what the operating system would connect to. */
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** What fetchPublicUrl needs besides the URL. */
export interface FetchPublicUrlOptions {
  /** The request parameter that carried the URL, named in every error (`image`, `url`). */
  param: string;
  /** Largest body accepted; a larger Content-Length is refused and reading stops past it. */
  maxBytes: number;
  /** `url_inputs.allow_hosts`: `host:port` entries that skip the address rules (and may use http). */
  allowHosts: readonly string[];
  resolver?: Resolver;
  /** Total time for every hop and the body (default 10 s). */
  timeoutMs?: number;
}

/** The fetched body, its declared type, and the URL it finally came from. */
export interface FetchedUrl { bytes: Buffer; contentType: string | null; finalUrl: string; }

/** Redirects followed at most. */
export const MAX_REDIRECTS = 3;
/** Default total time of one fetch. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The only headers sent. */
export const FETCH_HEADERS: Readonly<Record<string, string>> = { 'user-agent': 'unified-ai-gateway-url-fetcher/1', accept: '*/*' };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Pinned = readonly { address: string; family: 4 | 6 }[];

/** Rejects with the abort reason as soon as `signal` aborts (a stalled resolver cannot outlive the fetch). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The hop's addresses, every one judged (unless the host is allowed); throws the client's 400 otherwise. */
async function pinAddresses(target: UrlTarget, resolver: Resolver, signal: AbortSignal, refuse: (problem: string) => GatewayError): Promise<Pinned> {
  if (target.literal !== null) return [canonicalAddress(target.literal)!];
  let answers: readonly { address: string }[];
  try { answers = await abortable(resolver(target.url.hostname), signal); }
  catch (error) { if (signal.aborted) throw error; throw refuse("the URL's host could not be resolved"); }
  if (answers.length === 0) throw refuse("the URL's host could not be resolved");
  return answers.map(({ address }) => {
    const canonical = canonicalAddress(address);
    const reason = canonical === null ? 'something that is not an IP address' : refusedAddressReason(canonical.address);
    if (canonical === null || (reason !== null && !target.allowed)) throw refuse(`the URL's host resolves to ${reason}`);
    return canonical;
  });
}

/**
 * The connection's `lookup`: answers only the addresses checked for `hostname`, judged again (so a
 * second, rebinding answer can never be connected to); any other name fails. Exported for tests.
 */
export function pinnedLookup(hostname: string, pinned: Pinned, allowed: boolean): LookupFunction {
  return (name, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
    const list = pinned.filter((a) => (wanted === 0 || a.family === wanted) && (allowed || refusedAddressReason(a.address) === null));
    const first = list[0];
    if (name !== hostname || !first) {
      const error: NodeJS.ErrnoException = Object.assign(new Error(`lookup refused for ${name}`), { code: 'ENOTFOUND' });
      return process.nextTick(callback, error, '', 0);
    }
    if (options.all) process.nextTick(callback, null, list.map((a) => ({ ...a })));
    else process.nextTick(callback, null, first.address, first.family);
  };
}

/** Drops a body without reading it (undici reports the abort as an error nobody needs). */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Reads at most `maxBytes` of the body; past it the stream is destroyed and the fetch refused. */
async function readCapped(body: AsyncIterable<Buffer> & Parameters<typeof discard>[0], maxBytes: number, refuse: (problem: string) => GatewayError): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > maxBytes) { discard(body); throw refuse(`the URL's content is larger than ${maxBytes} bytes`); }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/** One request on its own agent: a redirect's location, or the body. */
async function fetchHop(target: UrlTarget, pinned: Pinned, opts: FetchPublicUrlOptions, timeoutMs: number, signal: AbortSignal): Promise<{ location: string } | FetchedUrl> {
  const refuse = (problem: string): GatewayError => urlInputError(opts.param, problem);
  const hostname = target.literal ?? target.url.hostname;
  const agent = new Agent({
    connect: { lookup: pinnedLookup(hostname, pinned, target.allowed), timeout: timeoutMs },
    headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: 1, pipelining: 0,
  });
  try {
    const { url } = target;
    const res = await agent.request({ origin: url.origin, path: url.pathname + url.search, method: 'GET', headers: { ...FETCH_HEADERS }, signal });
    const header = (name: string): string | null => {
      const value = res.headers[name];
      return Array.isArray(value) ? value.join(', ') : value ?? null;
    };
    const location = header('location');
    if (REDIRECTS.has(res.statusCode) && location !== null) { discard(res.body); return { location }; }
    if (res.statusCode < 200 || res.statusCode > 299) { discard(res.body); throw refuse(`fetching the URL failed with HTTP status ${res.statusCode}`); }
    const declared = Number(header('content-length') ?? NaN);
    if (declared > opts.maxBytes) { discard(res.body); throw refuse(`the URL's content is larger than ${opts.maxBytes} bytes`); }
    const bytes = await readCapped(res.body, opts.maxBytes, refuse);
    return { bytes, contentType: header('content-type'), finalUrl: url.href };
  } finally {
    agent.destroy().catch(() => undefined);
  }
}

/** A short, safe detail of a transport failure (`ECONNREFUSED`, a TLS code); never a stack or an address. */
function failureCode(error: unknown): string {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,64}$/.test(code) ? ` (${code})` : '';
}

/**
 * Fetches a public URL a client gave as an input, under every rule of issue 11 item 7. Throws
 * GatewayError('invalid_request', "<param>: ...", { param }) when the URL is refused, unreachable,
 * too slow, too large or answered with an error status; never a 5xx.
 */
export async function fetchPublicUrl(url: string, opts: FetchPublicUrlOptions): Promise<FetchedUrl> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const resolver = opts.resolver ?? systemResolver;
  const allow = allowHostSet(opts.allowHosts);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('url fetch timed out')), timeoutMs);
  try {
    let target = parseUrlInput(url, opts.param, allow);
    for (let redirects = 0; ; redirects++) {
      const prefix = redirects === 0 ? '' : 'the URL redirects to a refused URL: ';
      const pinned = await pinAddresses(target, resolver, controller.signal, (problem) => urlInputError(opts.param, `${prefix}${problem}`));
      const answer = await fetchHop(target, pinned, opts, timeoutMs, controller.signal);
      if (!('location' in answer)) return answer;
      if (redirects >= MAX_REDIRECTS) throw urlInputError(opts.param, `the URL redirects more than ${MAX_REDIRECTS} times`);
      let next: string;
      try { next = new URL(answer.location, target.url).href; } catch { throw urlInputError(opts.param, 'the URL redirects to an invalid URL'); }
      target = parseUrlInput(next, opts.param, allow, 'the URL redirects to a refused URL: ');
    }
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    if (controller.signal.aborted) throw urlInputError(opts.param, `fetching the URL took longer than ${timeoutMs / 1000} s`);
    throw urlInputError(opts.param, `the URL could not be fetched${failureCode(error)}`);
  } finally {
    clearTimeout(timer);
  }
}
