/**
 * Starts a whole gateway: manifests -> (simulator when a provider has no key) -> store -> server,
 * plus the hold sweeper and, on request, hot reload. Used by `npm start` and by the tests.
 */
import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { compileGateway, needsSimulator } from './config/compile.js';
import { ManifestError } from './config/errors.js';
import { loadGateway } from './config/load.js';
import { watchConfig, type ConfigWatcher } from './config/reload.js';
import { cronEvery, Jobs } from './jobs/scheduler.js';
import { AlertOutbox, scheduleAlerts } from './alerts/index.js';
import type { FilesSettings } from './config/types.js';
import { systemClock, type Clock } from './clock.js';
import { createBlobStore } from './files/blob/index.js';
import { cleanupTempFiles } from './files/cleanup.js';
import { signingSecret, type FileServices } from './files/index.js';
import { TempFiles } from './files/temp-files.js';
import { Outputs } from './files/outputs.js';
import type { Resolver } from './upstream/fetch/index.js';
import { pollVideoJobs } from './videos/poller.js';
import { anyVideoJobDue } from './videos/records.js';
import { VideoJobs } from './videos/service.js';
import { MediaOperations } from './pipeline/operation-ids.js';
import { MessageFiles } from './files/message-files.js';
import { ResponseRecords } from './responses/records.js';
import { Ledger } from './ledger/ledger.js';
import { createLimiter } from './limits/index.js';
import { AuthCache } from './pipeline/auth-cache.js';
import type { Runtime } from './pipeline/stage.js';
import { createLogger, logLevelFromEnv, type LoggerOptions } from './observability/log.js';
import { timeStatements } from './observability/stage-timings.js';
import { GatewayMetrics } from './observability/metrics.js';
import { startTracing } from './observability/traces.js';
import { buildServer } from './server/app.js';
import { drain } from './server/drain.js';
import { buildGeneration, type Generation } from './server/generation.js';
import type { Simulator } from './sim/server.js';
import { openDb, type Db } from './store/db.js';
import type { ConsoleDeps } from './console/routes.js';
import { mailTransportFromEnv } from './console/mail.js';
import { purgeExpired } from './console/store.js';
import { SigninThrottle } from './console/throttle.js';
import { UpstreamClient } from './upstream/client.js';
import { CIRCUIT_STATE_VALUE, DeploymentHealth } from './routing/health.js';
import { projectRoot } from './paths.js';
import { Availability, withoutCredentials } from './observability/availability.js';
import { readiness, type ConfigCheck } from './server/readiness.js';
import { describeProviders, describeStore, type StartupFacts } from './server/startup.js';
import { Grants } from './ledger/grants/index.js';
import { GrantMetrics } from './observability/grant-metrics.js';

/** How to start. */
export interface GatewayOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  watch?: boolean;
  log?: LogFn;
  /** The clock of file lifetimes and quotas (tests move one by hand); default the system clock. */
  clock?: Clock;
  /** Resolves URL inputs' host names (tests map names to loopback); default the system resolver. */
  resolver?: Resolver;
  /** For an in-memory store: the data directory it starts from (see memoryStoreTemplate; tests). */
  memoryTemplate?: Blob;
  /** Where the log lines go (tests read the access log); default standard output. */
  logDestination?: LoggerOptions['destination'];
}

/** Where the gateway's own lines go; `level` defaults to info (outages are warn, recoveries info). */
export type LogFn = (message: string, fields?: Record<string, unknown>, level?: 'info' | 'warn' | 'error') => void;

/** A started gateway. */
export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  db: Db;
  runtime: Runtime;
  simulator: Simulator | null;
  generation(): Generation;
  /** What it runs on, for the start line. */
  facts(): StartupFacts;
  /** Reloads the manifests now; resolves to the error when they are invalid (the old config keeps serving). */
  reload(): Promise<ManifestError | null>;
  /** SIGTERM: stop accepting, finish what is in flight up to `deadlineMs`, settle everything, close. */
  drain(deadlineMs: number): Promise<void>;
  /** Posts every charge answered on a credit grant so far (issue 30); the grants stay. */
  postGrants(): Promise<void>;
  close(): Promise<void>;
}

/** Boots a gateway from the manifests. */
export async function startGateway(opts: GatewayOptions = {}): Promise<RunningGateway> {
  const env = opts.env ?? process.env;
  const logger = createLogger({ level: logLevelFromEnv(env), destination: opts.logDestination });
  const log: LogFn = opts.log ?? ((message, fields, level = 'info') => logger[level](fields ?? {}, message));
  const configFile = resolve(opts.configFile ?? env.GATEWAY_CONFIG ?? resolve(projectRoot(), 'gateway.config.yaml'));
  let raw = await loadGateway(configFile);
  let simulator: Simulator | null = null;
  const simulatorFor = async (r: typeof raw): Promise<string | null> => {
    if (!simulator && r.providers.some((p) => needsSimulator(p.manifest, env))) {
      // Loaded only when a provider has no key: a gateway on live vendors never loads the simulator.
      const { startSimulator } = await import('./sim/server.js');
      simulator = await startSimulator({ port: Number(env.SIM_PORT ?? r.config.simulator?.port ?? 0) });
    }
    return simulator?.url ?? null;
  };
  let gateway = await compileGateway(raw, { env, simulatorUrl: await simulatorFor(raw) });
  const storeTarget = describeStore(env.DATABASE_URL || undefined, gateway.settings.dataDir);
  // Outages are logged once when they start and once when they end (issue 8 items 2-3).
  const storeAvailability = new Availability(storeTarget, (up, error) => {
    if (up) log('store recovered', { store: storeTarget }, 'info');
    else log('store unavailable: requests answer 503 store_unavailable until it is back', { store: storeTarget, error }, 'error');
  });
  const db = timeStatements(await openDb({ databaseUrl: env.DATABASE_URL || undefined, dataDir: gateway.settings.dataDir, availability: storeAvailability, memoryTemplate: opts.memoryTemplate }));
  const ledger = new Ledger(db);
  const metrics = new GatewayMetrics();
  metrics.setHoldsOpen(async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM holds WHERE closed_at IS NULL'))[0]?.n ?? 0);
  const policy = gateway.settings.limiterPolicy;
  // Named before createLimiter resolves: a Redis already down at start reports while it still connects
  // (reading limiterBackend there threw a ReferenceError that killed the start; test/e2e/redis-start.test.ts).
  let limiterName = `redis ${withoutCredentials(env.REDIS_URL ?? '')}`;
  const limiterBackend = await createLimiter(env, {
    policy,
    onAvailabilityChange: (up, error) => {
      const fields = { limiter: limiterName, error };
      if (up) log('Redis limiter backend recovered', fields, 'info');
      else log(policy === 'fail_open' ? 'Redis limiter backend unavailable: admitting on in-memory limits (fail_open)' : 'Redis limiter backend unavailable: requests answer 503 limiter_unavailable (fail_closed)', fields, policy === 'fail_open' ? 'warn' : 'error');
    },
    onFallback: () => metrics.limiterFallback(),
  });
  limiterName = limiterBackend.describe;
  // Alerts (issue 33 item 3): circuits' events written from the start; delivered by the jobs, below.
  const alerts = new AlertOutbox(db, opts.clock ?? systemClock, () => gateway.settings.alerts);
  const deployments = new DeploymentHealth(Date.now, (id, state) => {
    metrics.circuitState(id, CIRCUIT_STATE_VALUE[state]);
    if (state !== 'half_open') alerts.circuit(id, state === 'open').catch((error: unknown) => log('alert not written', { deployment: id, error: String(error) }, 'error'));
    if (state !== 'half_open') log(state === 'open' ? 'deployment circuit opened: skipped until it is probed' : 'deployment circuit closed', { deployment: id }, state === 'open' ? 'warn' : 'info');
  });
  // Credit grants (issue 30): requests admitted in memory, charges posted behind the answer.
  // Replicas sharing a PostgreSQL and a Redis hear reclaim requests on both (NOTIFY and pub/sub).
  const reclaimBus = env.REDIS_URL && env.DATABASE_URL
    ? new (await import('./ledger/grants/redis-bus.js')).RedisReclaimBus(env.REDIS_URL, env.GATEWAY_REDIS_PREFIX || 'gw:')
    : undefined;
  const grants = new Grants(db, () => gateway.settings.grants, () => gateway.settings.checkpointMs, new GrantMetrics(metrics.registry), reclaimBus);
  await grants.start();
  const runtime: Runtime = { ledger, limiter: limiterBackend.limiter, metrics, logger, inflight: new Set(), upstream: new UpstreamClient(), auth: new AuthCache(ledger), deployments, grants, alerts };
  // OpenTelemetry traces (issue 33 item 1): only with an OTLP endpoint set; otherwise nothing is loaded.
  const tracing = await startTracing(env, () => gateway.settings.traces.content);
  if (tracing) {
    runtime.tracing = tracing;
    log('traces on: spans exported over OTLP/HTTP', { endpoint: withoutCredentials(tracing.endpoint), service: tracing.serviceName });
  }
  let lastReload: ConfigCheck['last_reload'] = null;
  const probes = {
    store: async () => { await db.query('SELECT 1'); return storeAvailability.check(); },
    limiter: () => limiterBackend.check(),
    config: (): ConfigCheck => ({ status: 'ok', loaded_at: gateway.loadedAt.toISOString(), routes: gateway.routes.length, offerings: gateway.offerings.size, last_reload: lastReload }),
  };
  const clock = opts.clock ?? systemClock;
  runtime.clock = clock;
  const files = await openFiles(db, runtime.upstream, env, gateway.settings.dataDir === ':memory:' ? null : gateway.settings.dataDir, clock, () => gateway.settings.files);
  runtime.files = files;
  runtime.urlResolver = opts.resolver;
  const videoDeps = { db, clock, outputs: files.outputs!, settings: () => gateway.settings };
  runtime.videos = new VideoJobs(videoDeps);
  const responses = new ResponseRecords(db, clock, () => gateway.settings.responses.storeTtlMs);
  runtime.responses = responses;
  runtime.operations = new MediaOperations({ db, clock, files, outputs: files.outputs!, videos: runtime.videos, required: () => gateway.settings.operationIds.required });
  const jobs = new Jobs(db, (message, fields) => log(message, fields));
  let generation = buildGeneration(gateway, runtime);
  const adminToken = env.GATEWAY_ADMIN_TOKEN || null;
  const mail = mailTransportFromEnv(env, (message) => log(message, { mail: 'outbox' }));
  const consoleDeps: ConsoleDeps = {
    db, ledger, auth: runtime.auth, mail, clock, adminToken, log,
    settings: () => gateway.settings.console, gateway: () => gateway,
    throttle: new SigninThrottle(() => gateway.settings.console.signinAttempts, () => clock.now().getTime()),
  };
  const app = await buildServer({
    runtime, generation: () => generation, adminToken, jobs, console: consoleDeps, mail, alerts,
    openapiFile: resolve(projectRoot(), 'src/generated/openapi.json'), bodyLimitBytes: gateway.settings.bodyLimitBytes,
    metrics, metricsToken: env.GATEWAY_METRICS_TOKEN || null,
    log: (message, error) => log(message, { error: error instanceof Error ? error.message : String(error) }, 'error'),
    readiness: () => readiness(probes, { store: storeTarget, limiter: limiterBackend.describe }),
  });
  await app.listen({ host: gateway.settings.host, port: gateway.settings.port });
  const address = app.server.address();
  const url = `http://${gateway.settings.host}:${typeof address === 'object' && address ? address.port : gateway.settings.port}`;

  jobs.add({
    name: 'hold-sweeper', schedule: cronEvery(gateway.settings.sweepIntervalMs),
    due: () => ledger.hasExpiredHolds(), run: async () => ({ released: await ledger.sweepExpiredHolds() }),
  });
  jobs.add({ name: 'files-cleanup', schedule: gateway.settings.files.cleanupSchedule, run: async () => ({
    ...await cleanupTempFiles(db, files.blobs, clock, gateway.settings.files.uploadUrlTtlMs),
    ...await files.messages?.cleanup(gateway.providers),
    console_records_purged: await purgeExpired(db, clock.now()),
  }) });
  jobs.add({ name: 'video-jobs', schedule: gateway.settings.videoJobs.pollSchedule, due: () => anyVideoJobDue(db, clock.now()), run: async () => ({
    ...await pollVideoJobs({ ...videoDeps, ledger, upstream: runtime.upstream, gateway: () => gateway }),
  }) });
  // Stored responses (issue 31 item 3): expired ones read as absent at once and are deleted here.
  jobs.add({ name: 'responses-sweep', schedule: gateway.settings.responses.sweepSchedule, due: () => responses.anyExpired(), run: async () => ({ responses_expired: await responses.sweep() }) });
  scheduleAlerts(alerts, { db, clock, settings: () => gateway.settings.alerts, mail }, jobs);
  await jobs.runNow('hold-sweeper');

  const reload = async (): Promise<ManifestError | null> => {
    try {
      const next = await loadGateway(configFile);
      const compiled = await compileGateway(next, { env, simulatorUrl: await simulatorFor(next) });
      raw = next; gateway = compiled; generation = buildGeneration(compiled, runtime);
      lastReload = { result: 'ok', at: new Date().toISOString() };
      metrics.configReloaded(true);
      log('configuration reloaded', { routes: compiled.routes.length, offerings: compiled.offerings.size });
      return null;
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      metrics.configReloaded(false);
      lastReload = { result: 'refused', at: new Date().toISOString(), error: error.message };
      log('configuration refused; the previous one keeps serving', { error: error.message });
      return error;
    }
  };
  const closeServices = async (): Promise<void> => {
    // What was answered on grants is posted and the grants given back before the store closes.
    await grants.close();
    await runtime.upstream.close();
    // The spans of the last requests are exported, at most for the export timeout.
    await runtime.tracing?.shutdown();
    await runtime.limiter.close();
    await (simulator as Simulator | null)?.close();
    await files.blobs.close();
    ledger.close();
    await db.close();
  };
  let watcher: ConfigWatcher | null = null;
  if (opts.watch) {
    const includes = [raw.config.includes?.routes ?? 'routes', raw.config.includes?.providers ?? 'providers'];
    watcher = await watchConfig(raw.root, includes, async () => { await reload(); });
  }

  return {
    url, app, db, runtime, generation: () => generation, reload,
    facts: () => ({ store: storeTarget, limiter: limiterBackend.describe, adminApi: Boolean(env.GATEWAY_ADMIN_TOKEN), providers: describeProviders(gateway) }),
    get simulator() { return simulator; },
    postGrants: () => grants.book.flushAll(),
    async drain(deadlineMs: number) {
      watcher?.close();
      await jobs.stop();
      await drain(app, runtime.inflight, deadlineMs, log);
      await closeServices();
    },
    async close() {
      watcher?.close();
      await jobs.stop();
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await closeServices();
    },
  };
}

/** The blob store (GATEWAY_BLOB_STORE) and the file services on it. */
async function openFiles(db: Db, upstream: UpstreamClient, env: NodeJS.ProcessEnv, dataDir: string | null, clock: Clock, settings: () => FilesSettings): Promise<FileServices> {
  const blobs = await createBlobStore(env, dataDir);
  const secret = await signingSecret(db, env);
  const temp = new TempFiles({ db, blobs, settings, clock, secret });
  const outputs = new Outputs({ db, blobs, settings, clock, secret });
  const messages = new MessageFiles({ db, blobs, upstream, clock, settings });
  return { blobs, temp, outputs, messages, publish: { db, blobs, upstream, clock, settings }, publicUrl: env.GATEWAY_PUBLIC_URL?.replace(/\/+$/, '') || null };
}
