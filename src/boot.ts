/**
 * Starts a whole gateway: manifests -> (simulator when a provider has no key) -> store -> server,
 * plus the hold sweeper and, on request, hot reload. Used by `npm start` and by the tests.
 */
import { resolve } from 'node:path';
import { CronJob } from 'cron';
import type { FastifyInstance } from 'fastify';
import { compileGateway, needsSimulator } from './config/compile.js';
import { ManifestError } from './config/errors.js';
import { loadGateway } from './config/load.js';
import { watchConfig, type ConfigWatcher } from './config/reload.js';
import { runExclusive } from './jobs/exclusive.js';
import { Ledger } from './ledger/ledger.js';
import { createLimiter } from './limits/index.js';
import { AuthCache } from './pipeline/auth-cache.js';
import type { Runtime } from './pipeline/stage.js';
import { createLogger, logLevelFromEnv } from './observability/log.js';
import { GatewayMetrics } from './observability/metrics.js';
import { buildServer } from './server/app.js';
import { drain } from './server/drain.js';
import { buildGeneration, type Generation } from './server/generation.js';
import { startSimulator, type Simulator } from './sim/server.js';
import { openDb, type Db } from './store/db.js';
import { UpstreamClient } from './upstream/client.js';
import { projectRoot } from './paths.js';

/** How to start. */
export interface GatewayOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  watch?: boolean;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** A started gateway. */
export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  db: Db;
  runtime: Runtime;
  simulator: Simulator | null;
  generation(): Generation;
  /** Reloads the manifests now; resolves to the error when they are invalid (the old config keeps serving). */
  reload(): Promise<ManifestError | null>;
  /** SIGTERM: stop accepting, finish what is in flight up to `deadlineMs`, settle everything, close. */
  drain(deadlineMs: number): Promise<void>;
  close(): Promise<void>;
}

function cronEvery(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds < 60 ? `*/${seconds} * * * * *` : `0 */${Math.max(1, Math.round(seconds / 60))} * * * *`;
}

/** Boots a gateway from the manifests. */
export async function startGateway(opts: GatewayOptions = {}): Promise<RunningGateway> {
  const env = opts.env ?? process.env;
  const logger = createLogger({ level: logLevelFromEnv(env) });
  const log = opts.log ?? ((message: string, fields?: Record<string, unknown>) => logger.info(fields ?? {}, message));
  const configFile = resolve(opts.configFile ?? env.GATEWAY_CONFIG ?? resolve(projectRoot(), 'gateway.config.yaml'));
  let raw = await loadGateway(configFile);
  let simulator: Simulator | null = null;
  const simulatorFor = async (r: typeof raw): Promise<string | null> => {
    if (!simulator && r.providers.some((p) => needsSimulator(p.manifest, env))) {
      simulator = await startSimulator({ port: Number(env.SIM_PORT ?? r.config.simulator?.port ?? 0) });
    }
    return simulator?.url ?? null;
  };
  let gateway = await compileGateway(raw, { env, simulatorUrl: await simulatorFor(raw) });
  const db = await openDb({ databaseUrl: env.DATABASE_URL || undefined, dataDir: gateway.settings.dataDir });
  const ledger = new Ledger(db);
  const metrics = new GatewayMetrics();
  metrics.setHoldsOpen(async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM holds WHERE closed_at IS NULL'))[0]?.n ?? 0);
  const runtime: Runtime = { ledger, limiter: await createLimiter(env), metrics, logger, inflight: new Set(), upstream: new UpstreamClient(), auth: new AuthCache(ledger) };
  let generation = buildGeneration(gateway, runtime);
  const app = await buildServer({
    runtime, generation: () => generation, adminToken: env.GATEWAY_ADMIN_TOKEN || null,
    openapiFile: resolve(projectRoot(), 'src/generated/openapi.json'), bodyLimitBytes: gateway.settings.bodyLimitBytes,
    metrics, metricsToken: env.GATEWAY_METRICS_TOKEN || null,
    log: (message, error) => log(message, { error: error instanceof Error ? error.message : String(error) }),
  });
  await app.listen({ host: gateway.settings.host, port: gateway.settings.port });
  const address = app.server.address();
  const url = `http://${gateway.settings.host}:${typeof address === 'object' && address ? address.port : gateway.settings.port}`;

  const sweeper = CronJob.from({
    cronTime: cronEvery(gateway.settings.sweepIntervalMs), start: true,
    onTick: async () => {
      const released = await runExclusive(db, 'hold-sweeper', () => ledger.sweepExpiredHolds()).catch((e: unknown) => { log('hold sweep failed', { error: String(e) }); return 0; });
      if (released) log('released expired holds', { released });
    },
  });
  await runExclusive(db, 'hold-sweeper', () => ledger.sweepExpiredHolds());

  const reload = async (): Promise<ManifestError | null> => {
    try {
      const next = await loadGateway(configFile);
      const compiled = await compileGateway(next, { env, simulatorUrl: await simulatorFor(next) });
      raw = next; gateway = compiled; generation = buildGeneration(compiled, runtime);
      metrics.configReloaded(true);
      log('configuration reloaded', { routes: compiled.routes.length, offerings: compiled.offerings.size });
      return null;
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      metrics.configReloaded(false);
      log('configuration refused; the previous one keeps serving', { error: error.message });
      return error;
    }
  };
  const closeServices = async (): Promise<void> => {
    await runtime.upstream.close();
    await runtime.limiter.close();
    await (simulator as Simulator | null)?.close();
    await db.close();
  };
  let watcher: ConfigWatcher | null = null;
  if (opts.watch) {
    const includes = [raw.config.includes?.routes ?? 'routes', raw.config.includes?.providers ?? 'providers'];
    watcher = await watchConfig(raw.root, includes, async () => { await reload(); });
  }

  return {
    url, app, db, runtime, generation: () => generation, reload,
    get simulator() { return simulator; },
    async drain(deadlineMs: number) {
      watcher?.close();
      await sweeper.stop();
      await drain(app, runtime.inflight, deadlineMs, log);
      await closeServices();
    },
    async close() {
      watcher?.close();
      await sweeper.stop();
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await closeServices();
    },
  };
}
