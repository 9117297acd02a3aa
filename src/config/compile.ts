/**
 * Turns validated manifests into a CompiledGateway: environment overrides applied, credentials
 * resolved from `env:NAME` locations, prices parsed to exact nano-USD, request schemas compiled.
 * Cross-file rules that JSON Schema cannot express are checked here and reported as ManifestError.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ProviderManifest } from '../generated/manifest-types.js';
import { parseUsd } from '../money.js';
import { hasTranslator } from '../translate/registry.js';
import { ManifestError } from './errors.js';
import type { RawGateway } from './load.js';
import type { CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute, GatewaySettings } from './types.js';

/** What compile needs from outside the manifests. */
export interface CompileContext { env: NodeJS.ProcessEnv; simulatorUrl: string | null; }

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ManifestError(`env ${name}`, '', `must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return value;
}

function settingsOf(raw: RawGateway, env: NodeJS.ProcessEnv): GatewaySettings {
  const c = raw.config;
  return {
    host: env.GATEWAY_HOST || c.server?.host || '127.0.0.1',
    port: intFromEnv(env, 'PORT', c.server?.port ?? 8080),
    bodyLimitBytes: c.server?.body_limit_bytes ?? 10 * 1024 * 1024,
    dataDir: env.GATEWAY_DATA_DIR || (c.store?.data_dir ? join(raw.root, c.store.data_dir) : join(raw.root, '.gateway')),
    holdTtlMs: intFromEnv(env, 'GATEWAY_HOLD_TTL_SECONDS', c.billing?.hold_ttl_seconds ?? 900) * 1000,
    sweepIntervalMs: intFromEnv(env, 'GATEWAY_SWEEP_INTERVAL_SECONDS', c.billing?.sweep_interval_seconds ?? 30) * 1000,
    inputMarginPercent: BigInt(c.billing?.input_estimate_margin_percent ?? 10),
    simulatorPort: intFromEnv(env, 'SIM_PORT', c.simulator?.port ?? 0),
    limits: { ...(c.limits ?? {}) },
  };
}

/** The env variable named by an `env:NAME` location. */
export function envLocation(location: string): string {
  return location.slice('env:'.length);
}

/** True when the provider has no credential and will be served by the simulator. */
export function needsSimulator(manifest: ProviderManifest, env: NodeJS.ProcessEnv): boolean {
  return !env[envLocation(manifest.auth.key)] && manifest.simulator_when_keyless !== false;
}

function compileProvider(file: string, m: ProviderManifest, ctx: CompileContext): CompiledProvider {
  const apiKey = ctx.env[envLocation(m.auth.key)] || null;
  const simulated = needsSimulator(m, ctx.env);
  let baseUrl = ctx.env[m.base_url.env] || m.base_url.default;
  if (simulated) {
    if (!ctx.simulatorUrl) throw new ManifestError(file, '/auth/key', `${m.auth.key} is not set and no simulator is running`);
    // The simulator serves every format under the vendor's own path prefix (e.g. /v1).
    baseUrl = ctx.simulatorUrl + new URL(m.base_url.default).pathname.replace(/\/$/, '');
  }
  return {
    id: m.id, baseUrl: baseUrl.replace(/\/$/, ''), apiKey, authScheme: m.auth.scheme, simulated, headers: { ...(m.headers ?? {}) },
    timeouts: { connectMs: m.timeouts?.connect_ms ?? 5000, headersMs: m.timeouts?.headers_ms ?? 120_000, idleMs: m.timeouts?.idle_ms ?? 120_000 },
    operations: m.operations,
  };
}

function priceOf(file: string, path: string, text: string | undefined): bigint {
  if (text === undefined) return -1n;
  try { return parseUsd(text); } catch (error) { throw new ManifestError(file, path, (error as Error).message); }
}

function compileOfferings(file: string, m: ProviderManifest): CompiledOffering[] {
  return m.offerings.map((o, index) => {
    const at = `/offerings/${index}/billing`;
    const input = priceOf(file, `${at}/prices/input`, o.billing.prices.input);
    const tools: Record<string, bigint> = {};
    for (const [name, text] of Object.entries(o.billing.tools ?? {})) tools[name] = priceOf(file, `${at}/tools/${name}`, text);
    const cached = priceOf(file, `${at}/prices/cached_input`, o.billing.prices.cached_input);
    const write = priceOf(file, `${at}/prices/cache_write`, o.billing.prices.cache_write);
    return {
      id: o.id, upstreamModel: o.upstream_model ?? o.id, providerId: m.id, serviceType: o.service_type,
      availability: o.availability, enabled: o.enabled !== false, nativeResponses: o.native_responses === true, created: o.created ?? 0,
      maxOutputTokens: o.max_output_tokens ?? 4096,
      billing: {
        unit: o.billing.unit, per: BigInt(o.billing.per),
        // A missing cached or cache-write price means those tokens cost the plain input price.
        prices: { input, output: priceOf(file, `${at}/prices/output`, o.billing.prices.output), cachedInput: cached < 0n ? input : cached, cacheWrite: write < 0n ? input : write },
        priceText: { ...o.billing.prices }, tools, toolText: { ...(o.billing.tools ?? {}) },
      },
    };
  });
}

async function compileRoutes(raw: RawGateway, wire: Map<string, object>): Promise<CompiledRoute[]> {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  const seen = new Map<string, string>();
  const routes: CompiledRoute[] = [];
  for (const { file, manifest } of raw.routes) {
    const key = `${manifest.method} ${manifest.path}`;
    if (seen.has(key)) throw new ManifestError(file, '/path', `${key} is already served by ${seen.get(key)}`);
    seen.set(key, file);
    if (manifest.handler === 'proxy' && !manifest.upstreams) throw new ManifestError(file, '/upstreams', 'a proxy route must list its upstream operations');
    for (const schema of Object.values(manifest.schemas ?? {})) {
      if (wire.has(schema)) continue;
      try { wire.set(schema, JSON.parse(await readFile(join(raw.root, 'schemas', schema), 'utf8'))); }
      catch (error) { throw new ManifestError(file, '/schemas', `cannot load schemas/${schema}: ${(error as Error).message}`); }
    }
    let validateRequest = null;
    const requestSchema = manifest.schemas?.request;
    if (requestSchema) {
      try { validateRequest = ajv.compile({ ...wire.get(requestSchema)!, $id: undefined }); }
      catch (error) { throw new ManifestError(file, '/schemas/request', `schema does not compile: ${(error as Error).message}`); }
    }
    routes.push({
      manifest, file, validateRequest,
      streamPointer: manifest.stream ? manifest.stream.when.split('/').slice(1) : null,
      serviceTypes: new Set(manifest.service_types ?? []), billable: manifest.billable ?? manifest.handler === 'proxy',
      upstreams: (manifest.upstreams ?? []).map((u) => ({ operation: u.operation, when: { nativeResponses: u.when?.native_responses }, params: u.params ?? {} })),
      requiredHeaders: (manifest.require_headers ?? []).map((h) => ({ name: h.name, aliases: h.aliases ?? [], values: new Set(h.values) })),
    });
  }
  return routes;
}

/** Every translation a route can need must exist: checked at boot and at codegen, never per request. */
function checkTranslators(routes: CompiledRoute[], providers: Array<{ file: string; manifest: ProviderManifest }>): void {
  for (const route of routes) {
    route.upstreams.forEach((upstream, index) => {
      const served = providers.filter((p) => p.manifest.operations[upstream.operation]);
      for (const { manifest } of served) {
        const format = manifest.operations[upstream.operation]!.format;
        if (!hasTranslator(route.manifest.format, format)) {
          throw new ManifestError(route.file, `/upstreams/${index}`, `no translator ${route.manifest.format}--${format} for operation "${upstream.operation}" of provider ${manifest.id}`);
        }
      }
    });
  }
}

/** Compiles validated manifests; throws ManifestError on any cross-file inconsistency. */
export async function compileGateway(raw: RawGateway, ctx: CompileContext): Promise<CompiledGateway> {
  const wire = new Map<string, object>();
  const routes = await compileRoutes(raw, wire);
  checkTranslators(routes, raw.providers);
  const providers = new Map<string, CompiledProvider>();
  const offerings = new Map<string, CompiledOffering>();
  for (const { file, manifest } of raw.providers) {
    if (providers.has(manifest.id)) throw new ManifestError(file, '/id', `provider id "${manifest.id}" is declared twice`);
    providers.set(manifest.id, compileProvider(file, manifest, ctx));
    for (const offering of compileOfferings(file, manifest)) {
      if (offerings.has(offering.id)) throw new ManifestError(file, '/offerings', `model id "${offering.id}" is declared by two offerings`);
      offerings.set(offering.id, offering);
    }
  }
  return { root: raw.root, loadedAt: new Date(), settings: settingsOf(raw, ctx.env), routes, providers, offerings, wireSchemas: wire };
}
