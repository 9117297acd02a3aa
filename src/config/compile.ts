/**
 * Turns validated manifests into a CompiledGateway: environment overrides applied, credentials
 * resolved from `env:NAME` locations, prices parsed to exact nano-USD, request schemas compiled.
 * Cross-file rules that JSON Schema cannot express are checked here and reported as ManifestError.
 */
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { compileAlerts } from '../alerts/settings.js';
import type { ProviderManifest, RouteManifest } from '../generated/manifest-types.js';
import type { MultipartSpec } from '../bodies/multipart.js';
import type { RawBodySpec } from '../bodies/raw.js';
import { formatIds, findClientFormat } from '../formats/index.js';
import type { ClientFormat } from '../formats/types.js';
import { attachMeters, compileMeters } from '../meters/index.js';
import { manifestPointer } from '../meters/pointer.js';
import { checkFileInputs, checkInputFields, checkMeters, checkPathParams, checkRawBody, checkStreamingAnswers, checkTranslators, chooseDefaultModels } from './checks.js';
import { ManifestError } from './errors.js';
import { scheduleError } from '../jobs/scheduler.js';
import type { RawGateway } from './load.js';
import type { Limits } from '../limits/types.js';
import { checkDeploymentRoutes, compileSources } from './deployments.js';
import { checkFallbacks } from './fallbacks.js';
import { compileAliases } from './aliases.js';
import { compileRouting, DEFAULT_ROUTING } from './routing.js';
import { compileGrants } from './grants.js';
import type { CompiledGateway, CompiledRoute, ConsoleSettings, FilesSettings, GatewaySettings } from './types.js';
import { parseUsd } from '../money.js';

export { envLocation, needsSimulator } from './providers.js';

/** What compile needs from outside the manifests. */
export interface CompileContext { env: NodeJS.ProcessEnv; simulatorUrl: string | null; }

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ManifestError(`env ${name}`, '', `must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** The account defaults of `limits:` (its other keys configure the limiter, not an account). */
function limitsOf(raw: RawGateway['config']['limits']): Limits {
  const { on_backend_error: _policy, ...limits } = raw ?? {};
  return limits;
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
    checkpointMs: intFromEnv(env, 'GATEWAY_CHECKPOINT_SECONDS', c.billing?.checkpoint_seconds ?? 1) * 1000,
    inputMarginPercent: BigInt(c.billing?.input_estimate_margin_percent ?? 10),
    simulatorPort: intFromEnv(env, 'SIM_PORT', c.simulator?.port ?? 0),
    limits: limitsOf(c.limits),
    limiterPolicy: c.limits?.on_backend_error ?? 'fail_closed',
    files: filesOf(c.files, checkedSchedule(raw, '/files/cleanup_schedule', c.files?.cleanup_schedule ?? '0 0 * * * *')),
    urlInputs: { allowHosts: c.url_inputs?.allow_hosts ?? [] },
    operationIds: { required: c.operation_ids?.required ?? false },
    traces: { content: c.observability?.traces?.content ?? false },
    videoJobs: { pollSchedule: checkedSchedule(raw, '/video_jobs/poll_schedule', c.video_jobs?.poll_schedule ?? '*/5 * * * * *'), deadlineMs: (c.video_jobs?.deadline_seconds ?? 3600) * 1000 },
    responses: { storeTtlMs: (c.responses?.store_ttl_seconds ?? 2_592_000) * 1000, sweepSchedule: checkedSchedule(raw, '/responses/sweep_schedule', c.responses?.sweep_schedule ?? '0 30 * * * *') },
    console: consoleOf(c.console, env),
    // issue 29 item 3: the defaults, with gateway.config.yaml's `routing:` on top.
    routing: compileRouting(c.routing, DEFAULT_ROUTING, { file: relative(raw.root, raw.configFile), pointer: '/routing', lineOf: raw.configLineOf }),
    grants: compileGrants(c.billing?.grants, env),
    alerts: compileAlerts(c.alerts, env),
  };
}

/** A job's schedule, refused at load (not when the job is first scheduled, after the server listens). */
function checkedSchedule(raw: RawGateway, pointer: string, schedule: string): string {
  const error = scheduleError(schedule);
  if (error) throw new ManifestError(raw.configFile, pointer, `not a cron schedule (5 fields, or 6 with seconds first): ${error}`);
  return schedule;
}

/** `console:` with its defaults (issue 13): no opening balance, links for a day, sessions for a week. */
function consoleOf(raw: RawGateway['config']['console'], env: NodeJS.ProcessEnv): ConsoleSettings {
  const attempts = raw?.signin_attempts;
  return {
    signupBalanceNano: parseUsd(raw?.signup_balance_usd ?? '0'),
    verificationTtlMs: (raw?.verification_ttl_seconds ?? 86_400) * 1000,
    sessionTtlMs: (raw?.session_ttl_seconds ?? 604_800) * 1000,
    publicUrl: (env.GATEWAY_PUBLIC_URL || raw?.public_url || '').replace(/\/+$/, '') || null,
    signinAttempts: { perEmail: attempts?.per_email ?? 5, perAddress: attempts?.per_address ?? 20, windowMs: (attempts?.window_seconds ?? 900) * 1000 },
  };
}

/** `files:` with the defaults of spec 8 (lifetimes) and no purposes unless declared; the cleanup schedule checked. */
function filesOf(raw: RawGateway['config']['files'], cleanupSchedule: string): FilesSettings {
  const purposes = new Map(Object.entries(raw?.purposes ?? {}).map(([name, p]) => [name, { maxBytes: p.max_bytes, contentTypes: new Set(p.content_types) }]));
  return {
    pendingTtlMs: (raw?.pending_ttl_seconds ?? 7200) * 1000,
    finalizedTtlMs: (raw?.finalized_ttl_seconds ?? 86_400) * 1000,
    uploadUrlTtlMs: (raw?.upload_url_ttl_seconds ?? 600) * 1000,
    readUrlTtlMs: (raw?.read_url_ttl_seconds ?? 300) * 1000,
    outputTtlMs: (raw?.output_ttl_seconds ?? 86_400) * 1000,
    cleanupSchedule,
    purposes,
    messages: {
      maxFileBytes: raw?.messages?.max_file_bytes ?? 20 * 1024 * 1024,
      maxFiles: raw?.messages?.max_files ?? 20,
      maxTotalBytes: raw?.messages?.max_total_bytes ?? 100 * 1024 * 1024,
      defaultTtlMs: (raw?.messages?.default_ttl_seconds ?? 86_400) * 1000,
    },
  };
}

/** A route's multipart declaration, with the defaults of spec 8's unstated limits. */
function multipartOf(manifest: RouteManifest): MultipartSpec | null {
  const body = manifest.body;
  if (body?.type !== 'multipart') return null;
  const files = Object.fromEntries(Object.entries(body.files ?? {}).map(([name, f]) => [name, { maxBytes: f.max_bytes, mime: f.mime ? new Set(f.mime) : null, min: f.min ?? 0, max: f.max ?? 1, ...(f.probe ? { probe: f.probe } : {}) }]));
  return { files, maxFields: body.max_fields ?? 64, fieldMaxBytes: body.field_max_bytes ?? 65_536, ...(body.json ? { acceptsJson: true } : {}), ...(body.json_refuses?.length ? { jsonRefuses: body.json_refuses } : {}), ...(body.max_total_bytes ? { maxTotalBytes: body.max_total_bytes } : {}), ...(body.oversize ? { oversize: body.oversize } : {}) };
}

/** A route's raw body declaration (`body: {type: raw}`), with the defaults of a multipart part's. */
function rawOf(manifest: RouteManifest): RawBodySpec | null {
  const body = manifest.body;
  if (body?.type !== 'raw') return null;
  return { part: body.part ?? 'file', maxBytes: body.max_bytes!, mime: new Set(body.mime!), oversize: body.oversize ?? 'payload_too_large', ...(body.probe ? { probe: body.probe } : {}) };
}

/** The client format a route names; an unknown one stops the boot (it would answer every request with a 500). */
function knownFormat(file: string, id: string): ClientFormat {
  const format = findClientFormat(id);
  if (!format) throw new ManifestError(file, '/format', `unknown client format "${id}" (known: ${formatIds().join(', ')})`);
  return format;
}

async function compileRoutes(raw: RawGateway, wire: Map<string, object>): Promise<CompiledRoute[]> {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  // Multipart fields and a raw body's query parameters arrive as text: their schema coerces them ("2" to 2, one value to a list).
  const coercing = new Ajv2020({ strict: false, allErrors: false, coerceTypes: 'array' });
  const seen = new Map<string, string>();
  const routes: CompiledRoute[] = [];
  for (const { file, manifest } of raw.routes) {
    const key = `${manifest.method} ${manifest.path}`;
    if (seen.has(key)) throw new ManifestError(file, '/path', `${key} is already served by ${seen.get(key)}`);
    seen.set(key, file);
    if (manifest.handler === 'proxy' && !manifest.upstreams) throw new ManifestError(file, '/upstreams', 'a proxy route must list its upstream operations');
    const format = knownFormat(file, manifest.format);
    const billable = manifest.billable ?? manifest.handler === 'proxy';
    if (billable && manifest.handler === 'proxy' && !manifest.meter) throw new ManifestError(file, '/meter', 'a billable route must declare what it meters (`billable: false` for a free one)');
    for (const schema of Object.values(manifest.schemas ?? {})) {
      if (wire.has(schema)) continue;
      try { wire.set(schema, JSON.parse(await readFile(join(raw.root, 'schemas', schema), 'utf8'))); }
      catch (error) { throw new ManifestError(file, '/schemas', `cannot load schemas/${schema}: ${(error as Error).message}`); }
    }
    let validateRequest = null;
    const requestSchema = manifest.schemas?.request;
    if (requestSchema) {
      const textual = manifest.body?.type === 'multipart' || manifest.body?.type === 'raw';
      try { validateRequest = (textual ? coercing : ajv).compile({ ...wire.get(requestSchema)!, $id: undefined }); }
      catch (error) { throw new ManifestError(file, '/schemas/request', `schema does not compile: ${(error as Error).message}`); }
    }
    checkFileInputs(file, manifest, requestSchema ? wire.get(requestSchema) : undefined);
    checkInputFields(file, manifest, requestSchema ? wire.get(requestSchema) : undefined);
    checkRawBody(file, manifest);
    const route: CompiledRoute = {
      manifest, file, validateRequest,
      streamPointer: manifest.stream ? manifestPointer(file, '/stream/when', manifest.stream.when) : null,
      serviceTypes: new Set(manifest.service_types ?? []), billable,
      upstreams: (manifest.upstreams ?? []).map((u, i) => ({
        operation: u.operation, params: u.params ?? {},
        when: {
          nativeResponses: u.when?.native_responses,
          present: u.when?.present === undefined ? undefined : manifestPointer(file, `/upstreams/${i}/when/present`, u.when.present),
          absent: u.when?.absent === undefined ? undefined : manifestPointer(file, `/upstreams/${i}/when/absent`, u.when.absent),
        },
        pathParams: Object.fromEntries(Object.entries(u.path_params ?? {}).map(([name, pointer]) => [name, manifestPointer(file, `/upstreams/${i}/path_params/${name}`, pointer)])),
      })),
      requiredHeaders: (manifest.require_headers ?? []).map((h) => ({ name: h.name, aliases: h.aliases ?? [], values: new Set(h.values) })),
      defaultModels: [],
      get defaultModel() { return this.defaultModels[0] ?? null; },
      multipart: multipartOf(manifest),
      raw: rawOf(manifest),
    };
    attachMeters(route, compileMeters(manifest, format, file));
    routes.push(route);
  }
  return routes;
}

/** Compiles validated manifests; throws ManifestError on any cross-file inconsistency. */
export async function compileGateway(raw: RawGateway, ctx: CompileContext): Promise<CompiledGateway> {
  const wire = new Map<string, object>();
  const routes = await compileRoutes(raw, wire);
  checkTranslators(routes, raw.providers);
  checkPathParams(routes, raw.providers);
  checkStreamingAnswers(routes, raw.providers);
  const settings = settingsOf(raw, ctx.env);
  // Providers first, then offerings and their deployments against them (issue 29 item 4).
  const { providers, offerings, sources } = compileSources(raw, ctx, settings.routing);
  checkDeploymentRoutes(routes, offerings, providers, sources);
  checkFallbacks(offerings, sources);
  checkMeters(routes, offerings, providers);
  chooseDefaultModels(routes, offerings, providers);
  const aliases = compileAliases(offerings, sources);
  return { root: raw.root, loadedAt: new Date(), settings, routes, providers, offerings, aliases, wireSchemas: wire };
}
