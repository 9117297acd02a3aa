/**
 * Compiles provider manifests: location and credential resolved from the environment (`env:NAME`
 * locations, never values), auth as a header and prefix, operations with their static query, and
 * offerings with exact nano-USD prices (spec 1: tokens priced by kind, every other unit by one price).
 */
import type { ProviderManifest } from '../generated/manifest-types.js';
import { parseUsd } from '../money.js';
import { authHeaderOf } from '../upstream/auth.js';
import { AccessTokens } from '../upstream/google-service-account.js';
import { KeyPool } from '../upstream/key-pool.js';
import { SIMULATOR_AWS_REGION, type CompiledSigV4 } from '../upstream/sigv4-auth.js';
import { ManifestError } from './errors.js';
import type { LineOf } from './load.js';
import { compilePoll } from './poll.js';
import type { UsageDialect } from './usage-dialect.js';
import { compileVariants } from './variants.js';
import { fillUrlParams, resolveUrlParams, type UrlParams } from './url-params.js';
import type { CompiledOffering, CompiledOperation, CompiledProvider, OfferingFileLimit, UpstreamAnswerKind, UpstreamRequestKind } from './types.js';

/** What provider compilation needs from outside the manifests. */
export interface ProviderContext { env: NodeJS.ProcessEnv; simulatorUrl: string | null; }

/** The env variable named by an `env:NAME` location. */
export function envLocation(location: string): string {
  return location.slice('env:'.length);
}

/** The provider's credential locations: `auth.keys`, or `auth.key` alone (the schema allows exactly one; issue 29 item 2). */
export function keyLocations(manifest: ProviderManifest): readonly string[] {
  return manifest.auth.keys ?? [manifest.auth.key!];
}

/** The provider's credential locations whose variable is set, in order. */
function setLocations(m: ProviderManifest, env: NodeJS.ProcessEnv): string[] {
  return keyLocations(m).filter((location) => Boolean(env[envLocation(location)]));
}

/** True when it will be served by the simulator: none of its credentials is set, or a url_params value without a default is not. */
export function needsSimulator(manifest: ProviderManifest, env: NodeJS.ProcessEnv): boolean {
  if (manifest.simulator_when_keyless === false) return false;
  // A credential alone does not configure a provider whose URL needs more (issue 32): AWS's keys are
  // also the S3 blob store's, and without AWS_REGION they must not turn Bedrock live (nor a key file
  // without VERTEX_PROJECT, Vertex). The start line says which providers are simulated.
  const unsetParam = Object.values(manifest.url_params ?? {}).some((p) => !env[p.env] && p.default === undefined);
  return setLocations(manifest, env).length === 0 || unsetParam;
}

/** The pool of the credentials that are set, in `auth.keys` order, each with its location (issue 29 item 2). */
function keyPoolOf(m: ProviderManifest, env: NodeJS.ProcessEnv): KeyPool {
  const locations = setLocations(m, env);
  return new KeyPool(locations.map((location) => env[envLocation(location)]!), locations);
}

function baseUrlOf(file: string, m: ProviderManifest, ctx: ProviderContext, simulated: boolean, params: UrlParams, lineOf?: LineOf): string {
  if (simulated) {
    const at = m.auth.keys ? '/auth/keys' : '/auth/key';
    const what = m.auth.keys ? `none of ${m.auth.keys.join(', ')} is set` : `${m.auth.key} is not set`;
    if (!ctx.simulatorUrl) throw new ManifestError(file, at, `${what} and no simulator is running`, lineOf?.(at));
    // The simulator serves every format under the vendor's own path prefix (e.g. /v1).
    return ctx.simulatorUrl + (m.base_url.default ? new URL(fillUrlParams(m.base_url.default, params)).pathname.replace(/\/$/, '') : '');
  }
  const url = ctx.env[m.base_url.env] || m.base_url.default;
  // A per-customer resource (an Azure endpoint) has no default: its key without its endpoint is an error.
  const set = setLocations(m, ctx.env).map(envLocation);
  if (!url) throw new ManifestError(file, '/base_url', `${m.base_url.env} must be set when ${set.join(' or ') || 'its key'} is (the resource's endpoint)`, lineOf?.('/base_url'));
  return fillUrlParams(url, params);
}

type OperationManifest = ProviderManifest['operations'][string];

/**
 * An operation's request and answer kinds (issue 9 point 3): only a POST sends a body, so a GET or
 * DELETE declaring a multipart or raw one is a mistake; a job to poll answers JSON, never a stream.
 */
function operationKinds(file: string, at: string, op: OperationManifest): { request: UpstreamRequestKind; answer: UpstreamAnswerKind } {
  const request = op.request ?? 'json';
  const answer = op.answer?.type ?? 'json';
  if (request !== 'json' && op.method !== 'POST') throw new ManifestError(file, `${at}/request`, `a ${op.method} operation sends no body, so it cannot declare request: ${request}`);
  if ((answer === 'sse' || answer === 'event-stream') && op.poll) throw new ManifestError(file, `${at}/answer/type`, `an operation answered by a job to poll (poll) cannot answer ${answer}`);
  return { request, answer };
}

/**
 * An operation's `stream_operation` (issue 32 item 2: ConverseStream beside Converse): one of the
 * provider's, in the same format, answering a stream; null when absent.
 */
function streamOperationOf(file: string, at: string, m: ProviderManifest, op: OperationManifest): string | null {
  const name = op.stream_operation;
  if (name === undefined) return null;
  const other = m.operations[name];
  const answer = other?.answer?.type ?? 'json';
  if (!other || other.format !== op.format || (answer !== 'sse' && answer !== 'event-stream')) {
    throw new ManifestError(file, `${at}/stream_operation`, `"${name}" must be an operation of this provider in format ${op.format} that answers sse or event-stream`);
  }
  return name;
}

function compileOperations(file: string, m: ProviderManifest, params: UrlParams): Record<string, CompiledOperation> {
  const operations: Record<string, CompiledOperation> = {};
  for (const [name, op] of Object.entries(m.operations)) {
    const at = `/operations/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const query = new URLSearchParams(op.query ?? {}).toString();
    const poll = op.poll && compilePoll(file, `${at}/poll`, op.poll);
    const binary = op.answer?.type === 'binary' ? { maxBytes: op.answer.max_bytes ?? 50 * 1024 * 1024 } : null;
    if (op.stream_path !== undefined && op.answer?.type !== 'sse') throw new ManifestError(file, `${at}/stream_path`, 'an operation with a stream_path streams: declare answer: {type: sse}');
    operations[name] = { method: op.method, path: fillUrlParams(op.path, params), streamPath: op.stream_path ? fillUrlParams(op.stream_path, params) : null,
      bodyEdits: op.body ? { remove: op.body.remove ?? [], set: op.body.set ?? {} } : null, format: op.format, ...operationKinds(file, at, op), query: query ? `?${query}` : '', poll: poll ?? null, binary, headers: op.headers ?? {},
      features: Object.fromEntries(Object.entries(op.features ?? {}).map(([name, f]) => [name, f.headers])), usage: usageDialectOf(op),
      streamOperation: streamOperationOf(file, at, m, op) };
  }
  return operations;
}

/** An operation's usage dialect (issue 32 item 1), or null when it reports usage as OpenAI's chat format does. */
function usageDialectOf(op: OperationManifest): UsageDialect | null {
  const u = op.usage;
  if (!u) return null;
  return { stream: u.stream ?? 'on_request', input: u.input, output: u.output, cachedInput: u.cached_input, reasoning: u.reasoning };
}

/** True when the provider is live under `env`: a self-hosted one (`only_when_set`) only while its variable is set. */
export function providerLive(m: ProviderManifest, env: NodeJS.ProcessEnv): boolean {
  return !m.only_when_set || Boolean(env[m.only_when_set]);
}

/** The manifest's static headers, plus each `env_headers` entry whose variable is set (e.g. an Azure region). */
function staticHeaders(file: string, m: ProviderManifest, env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = { ...(m.headers ?? {}) };
  for (const [name, variable] of Object.entries(m.env_headers ?? {})) {
    const value = env[variable];
    if (!value) continue;
    if (/[\r\n]/.test(value)) throw new ManifestError(file, `/env_headers/${name}`, `${variable} must not contain a line break`);
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** The auth header and, for a service account (its key is a key file's path), the token cache of its scope. */
function authOf(file: string, m: ProviderManifest): CompiledProvider['auth'] {
  if (m.auth.scheme !== 'google-service-account') return authHeaderOf(m.auth);
  if (!m.auth.scope) throw new ManifestError(file, '/auth/scope', 'a google-service-account auth needs the OAuth scope its tokens are asked for');
  return { ...authHeaderOf(m.auth), tokens: new AccessTokens(m.auth.scope) };
}

/**
 * The `sigv4` scheme's parameters (issue 32 item 2), or null for a header scheme: the region and the
 * access key id must be set with the secret (a simulated provider signs for the simulator's region).
 */
function sigV4Of(file: string, m: ProviderManifest, env: NodeJS.ProcessEnv, simulated: boolean, lineOf?: LineOf): CompiledSigV4 | null {
  if (m.auth.scheme !== 'sigv4') return null;
  const spec = m.auth.sigv4;
  if (!spec) throw new ManifestError(file, '/auth', 'scheme sigv4 needs auth.sigv4 (service, region, access_key_id)', lineOf?.('/auth'));
  const read = (location: string | undefined) => (location ? env[envLocation(location)] || undefined : undefined);
  const token = read(spec.session_token);
  if (simulated) return { service: spec.service, region: read(spec.region) ?? SIMULATOR_AWS_REGION, accessKeyId: '', simulated: true };
  for (const [name, location] of [['region', spec.region], ['access_key_id', spec.access_key_id]] as const) {
    if (!read(location)) throw new ManifestError(file, `/auth/sigv4/${name}`, `${envLocation(location)} must be set when ${setLocations(m, env).map(envLocation).join(' or ')} is`, lineOf?.(`/auth/sigv4/${name}`));
  }
  return { service: spec.service, region: read(spec.region)!, accessKeyId: read(spec.access_key_id)!, ...(token ? { sessionToken: token } : {}), simulated: false };
}

/** One provider, ready to send requests to; `lineOf` (the file's, from load) puts a line on its errors. */
export function compileProvider(file: string, m: ProviderManifest, ctx: ProviderContext, lineOf?: LineOf): CompiledProvider {
  const simulated = needsSimulator(m, ctx.env);
  const params = resolveUrlParams(file, m, ctx.env, simulated, keyLocations(m).map(envLocation).join(' or '));
  return {
    id: m.id, baseUrl: baseUrlOf(file, m, ctx, simulated, params, lineOf).replace(/\/$/, ''), keys: keyPoolOf(m, ctx.env), auth: authOf(file, m), sigv4: sigV4Of(file, m, ctx.env, simulated, lineOf), simulated, headers: staticHeaders(file, m, ctx.env),
    timeouts: { connectMs: m.timeouts?.connect_ms ?? 5000, headersMs: m.timeouts?.headers_ms ?? 120_000, idleMs: m.timeouts?.idle_ms ?? 120_000 },
    operations: compileOperations(file, m, params),
    skills: m.skills ? { source: m.skills.source, list: m.skills.list.map((s) => ({ id: s.id, displayTitle: s.display_title, latestVersion: s.latest_version, createdAt: s.created_at })) } : null,
  };
}

function priceOf(file: string, path: string, text: string | undefined): bigint {
  if (text === undefined) return -1n;
  try { return parseUsd(text); } catch (error) { throw new ManifestError(file, path, (error as Error).message); }
}

type OfferingManifest = ProviderManifest['offerings'][number];

/** Token prices; a missing cached or cache-write price means those tokens cost the plain input price. */
function tokenBilling(file: string, at: string, o: OfferingManifest): Pick<CompiledOffering['billing'], 'prices' | 'tools' | 'toolText' | 'priceText'> {
  const prices = o.billing.prices!;
  const input = priceOf(file, `${at}/prices/input`, prices.input);
  const cached = priceOf(file, `${at}/prices/cached_input`, prices.cached_input);
  const write = priceOf(file, `${at}/prices/cache_write`, prices.cache_write);
  const image = priceOf(file, `${at}/prices/image_input`, prices.image_input);
  const tools: Record<string, bigint> = {};
  for (const [name, text] of Object.entries(o.billing.tools ?? {})) tools[name] = priceOf(file, `${at}/tools/${name}`, text);
  return {
    prices: { input, output: priceOf(file, `${at}/prices/output`, prices.output), cachedInput: cached < 0n ? input : cached, cacheWrite: write < 0n ? input : write, imageInput: image < 0n ? input : image },
    priceText: { ...prices }, tools, toolText: { ...(o.billing.tools ?? {}) },
  };
}

const NO_TOKEN_PRICES = { input: 0n, output: 0n, cachedInput: 0n, cacheWrite: 0n, imageInput: 0n };

/**
 * Every unit but tokens: one `price`, or priced `variants` (issue 31 item 8). A variant offering's
 * `price` is its cheapest variant's, read only to order default offerings (the meters price each
 * request at its variant); its `priceText` is empty, the catalogue lists the variants instead.
 */
function quantityBilling(file: string, index: number, o: OfferingManifest): CompiledOffering['billing'] {
  const variants = compileVariants(file, index, o);
  const base = { unit: o.billing.unit, per: BigInt(o.billing.per), prices: NO_TOKEN_PRICES, tools: {}, toolText: {}, variants };
  if (variants.length > 0) return { ...base, price: variants.reduce((low, v) => (v.price < low ? v.price : low), variants[0]!.price), priceText: {} };
  return { ...base, price: priceOf(file, `/offerings/${index}/billing/price`, o.billing.price), priceText: { [o.billing.unit]: o.billing.price! } };
}

/**
 * A token-billed offering's context window and output cap, both declared (the schema requires them;
 * this narrows the type), as the catalogue shows them (issue 8 item 6); 0 for other units, never read.
 * An output cap of 0 is an embedding's (it generates no tokens): on any other model it would refuse
 * every request, so it is refused here.
 */
function tokenLimitsOf(file: string, index: number, o: OfferingManifest): { contextWindow: number; maxOutputTokens: number } {
  if (o.billing.unit !== 'token') return { contextWindow: 0, maxOutputTokens: 0 };
  for (const key of ['context_window', 'max_output_tokens'] as const) {
    if (o[key] === undefined) throw new ManifestError(file, `/offerings/${index}`, `a ${o.billing.unit}-billed offering must declare ${key}`);
  }
  if (o.max_output_tokens === 0 && o.service_type !== 'EMBEDDING') {
    throw new ManifestError(file, `/offerings/${index}/max_output_tokens`, `only an EMBEDDING offering may declare 0 (it generates no tokens); a ${o.service_type} model needs its real output cap`);
  }
  return { contextWindow: o.context_window!, maxOutputTokens: o.max_output_tokens! };
}

/** An offering's skills, each one the provider lists (a typo would silently refuse every execution). */
function knownSkills(file: string, index: number, m: ProviderManifest, ids: string[]): ReadonlySet<string> {
  const listed = new Set((m.skills?.list ?? []).map((s) => s.id));
  const unknown = ids.find((id) => !listed.has(id));
  if (unknown !== undefined) throw new ManifestError(file, `/offerings/${index}/skills`, `unknown skill "${unknown}" (the provider's skills: ${[...listed].join(', ') || 'none'})`);
  return new Set(ids);
}

/** An offering's `operations`, each one its provider has (a typo would hide the model from every route); null when absent. */
function knownOperations(file: string, index: number, m: ProviderManifest, names: string[] | undefined): ReadonlySet<string> | null {
  if (names === undefined) return null;
  const unknown = names.find((name) => !Object.hasOwn(m.operations, name));
  if (unknown !== undefined) throw new ManifestError(file, `/offerings/${index}/operations`, `unknown operation "${unknown}" (the provider's operations: ${Object.keys(m.operations).join(', ')})`);
  return new Set(names);
}

/** An offering's `files` limits, compiled. */
function fileLimits(o: OfferingManifest): Record<string, OfferingFileLimit> {
  return Object.fromEntries(Object.entries(o.files ?? {}).map(([part, f]) => [part, {
    ...(f.max !== undefined ? { max: f.max } : {}), ...(f.max_bytes !== undefined ? { maxBytes: f.max_bytes } : {}),
    ...(f.mime ? { mime: new Set(f.mime) } : {}), ...(f.square ? { square: true } : {}),
  }]));
}

/**
 * An offering as one provider file declares it: everything but what needs the other providers and
 * gateway.config.yaml (its deployments and routing policy, src/config/deployments.ts).
 */
export type OfferingBase = Omit<CompiledOffering, 'deployments' | 'routing'>;

/** Every offering of one provider (its fallbacks and continuation as declared: issue 29 items 4 and 6). */
export function compileOfferings(file: string, m: ProviderManifest): OfferingBase[] {
  return m.offerings.map((o, index) => {
    const at = `/offerings/${index}/billing`;
    const tokens = o.billing.unit === 'token';
    const billing: CompiledOffering['billing'] = tokens
      ? { unit: 'token', per: BigInt(o.billing.per), price: 0n, ...tokenBilling(file, at, o), variants: [] }
      : quantityBilling(file, index, o);
    return {
      id: o.id, aliases: o.aliases ?? [], displayName: o.display_name ?? o.id,
      upstreamModel: o.upstream_model ?? o.id, providerId: m.id, serviceType: o.service_type,
      availability: o.availability, enabled: o.enabled !== false, nativeResponses: o.native_responses === true,
      structuredOutput: o.structured_output === true, created: o.created ?? 0,
      ...tokenLimitsOf(file, index, o), billing,
      skills: knownSkills(file, index, m, o.skills ?? []),
      params: o.params ?? {},
      operations: knownOperations(file, index, m, o.operations), files: fileLimits(o),
      fallbacks: o.fallbacks ?? [], contextWindowFallbacks: o.context_window_fallbacks ?? [], contentPolicyFallbacks: o.content_policy_fallbacks ?? [],
      continuation: o.continuation ?? null,
    };
  });
}
