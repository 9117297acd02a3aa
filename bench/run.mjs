#!/usr/bin/env node
/**
 * `npm run bench`: measures the gateway against the simulator at a fixed upstream latency and
 * writes the figures to bench/RESULTS.md. It prints figures; it is not a timed test.
 *
 * Every party is its own child process on this machine: one standalone simulator
 * (dist/src/sim/main.js, SIM_LATENCY_MS), the floor proxy (bench/floor-proxy.mjs: node:http and an
 * undici pool in front of the simulator, nothing else), the gateway (dist/src/main.js) pointed at it as a live
 * provider, on PostgreSQL (a fresh gw_bench_<random> database, dropped at the end) and on PGlite
 * (GATEWAY_DATA_DIR=:memory:), and the Portkey open-source gateway (installed by this script into
 * bench/.portkey/). The load comes from this process over undici pools:
 *   - added latency: an open-loop generator at a fixed rate (500 req/s, and 100 req/s), p50/p99
 *     compared with the client calling the simulator directly at the same rate (added = difference);
 *   - throughput: closed loop, N concurrent requests for a fixed time;
 *   - streaming and translated streaming (claude-haiku-4-5 on /v1/chat/completions): time to the
 *     first body byte at the fixed rate, and streams per second in a closed loop;
 *   - resident memory (VmRSS of the gateway process) with 1,000 streams open at once (the simulator
 *     holds them open with a chunk_delay_ms fault), on the running process and on a fresh one;
 *   - per-stage timings: a gateway started with GATEWAY_STAGE_TIMINGS=1 under the open-loop loads,
 *     its gateway_stage_duration_seconds histogram read from /metrics (where each millisecond goes).
 * All targets run at once and every phase is measured in rounds that take the targets in turn
 * (rotating the order), so that load from other processes on the machine falls on all of them
 * alike; the CPU other processes took is measured and reported with every figure.
 *
 * Usage: npm run bench            (builds, then runs this file; about 11 minutes)
 *        node bench/run.mjs [--quick] [--no-portkey] [--no-postgres] [--no-pglite]
 *        node bench/run.mjs --render [file]   (rewrites the report from a run's saved figures,
 *                                              bench/.scratch/last-run.json by default; measures nothing)
 * Environment overrides: BENCH_SIM_LATENCY_MS, BENCH_RATE, BENCH_LOW_RATE, BENCH_STREAM_RATE,
 * BENCH_SECONDS (per target and phase), BENCH_ROUNDS, BENCH_WARMUP_SECONDS, BENCH_CONCURRENCY,
 * BENCH_OPEN_STREAMS, BENCH_QUIET_WAIT_SECONDS, BENCH_PROFILE (auto | 1 | 0), BENCH_STAGES (1 | 0),
 * BENCH_DATABASE_ADMIN_URL (default postgres://127.0.0.1:5432/postgres), BENCH_PORTKEY_VERSION,
 * BENCH_OUTPUT (default bench/RESULTS.md), BENCH_BASELINE_REF (a commit measured beside this build on the
 * chat phases; default 93c8a3d, the last before the generalised engine; empty: none).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ARGS, BENCH_DIR, CFG, QUICK, ROOT, progress, t0 } from './lib/config.mjs';
import { memoryBaselines } from './lib/cpu.mjs';
import { adminSql, commitLatencyMs, createDatabase, roundTripMs } from './lib/db.mjs';
import { measureAll, measureOpenStreams, storeWorkPerRequest } from './lib/measure.mjs';
import { children, cleanEnv, ensurePortkey, freePort, killChildren, prepareBaseline, startFloor, startGateway, startPortkey, startProcess } from './lib/processes.mjs';
import { profileGateway, profileNote } from './lib/profile.mjs';
import { evaluateTargets, f2, report } from './lib/report.mjs';
import { stageTimings } from './lib/stages.mjs';
import { benchVariants } from './lib/variants.mjs';

// ---------------------------------------------------------------------------------------------
// Main

/** Where a run's figures are saved, so that the report can be rewritten without measuring again. */
const SAVED = join(BENCH_DIR, '.scratch', 'last-run.json');

/** --render: the report of a saved run, its verdicts recomputed. */
function render(file) {
  const run = JSON.parse(readFileSync(file, 'utf8'));
  Object.assign(CFG, run.cfg, { output: CFG.output }); // the run's own settings, for the report's text
  const targets = evaluateTargets(run.results);
  writeFileSync(CFG.output, `${report({ ...run, startedAt: new Date(run.startedAt), targets })}\n`);
  progress(`wrote ${relative(process.cwd(), CFG.output) || CFG.output} from ${relative(process.cwd(), file)}`);
}

async function main() {
  const startedAt = new Date();
  const command = process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : `node bench/run.mjs${ARGS.length ? ` ${ARGS.join(' ')}` : ''}`;
  const runPortkey = !ARGS.includes('--no-portkey');
  const runPostgres = !ARGS.includes('--no-postgres');
  const runPglite = !ARGS.includes('--no-pglite');
  if (!existsSync(join(ROOT, 'dist/src/main.js')) || !existsSync(join(ROOT, 'dist/src/sim/main.js'))) {
    throw new Error('dist/ is missing: run `npm run bench` (it builds first) or `npx tsc -p tsconfig.json`');
  }
  const machine = {
    cpu: os.cpus()[0]?.model?.trim() ?? 'unknown', cores: os.cpus().length, ramGb: os.totalmem() / 2 ** 30,
    os: `${os.type()} ${os.release()} (${os.arch()})`, node: process.version,
  };
  progress(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.ramGb.toFixed(1)} GB RAM, node ${machine.node}${QUICK ? ' (--quick)' : ''}`);
  if (runPortkey) ensurePortkey();

  const simPort = await freePort();
  const sim = await startProcess('simulator', ['dist/src/sim/main.js'], {
    env: cleanEnv({ SIM_PORT: String(simPort), SIM_HOST: '127.0.0.1', SIM_LATENCY_MS: String(CFG.simLatencyMs) }), ready: /simulator listening on/,
  });
  const simUrl = `http://127.0.0.1:${simPort}`;
  const simInfo = { url: simUrl, pid: sim.pid };
  progress(`simulator on ${simUrl} with ${CFG.simLatencyMs} ms latency (pid ${sim.pid})`);

  const targets = [{ id: 'direct', kind: 'direct', label: 'Simulator, direct', url: simUrl, pid: null }];
  let db = null;
  let baseDb = null;
  const variantDbs = [];
  let profile = null;
  let stages = null;
  let portkeyInfo = null;
  try {
    const floor = await startFloor(simUrl);
    targets.push({ ...floor, id: 'floor' });
    progress(`floor proxy at ${floor.url} (pid ${floor.pid}, ${floor.rssStartMb.toFixed(0)} MB RSS)`);
    if (runPostgres) {
      db = await createDatabase();
      progress(`PostgreSQL database ${db.name} created (${db.version})`);
      const gw = await startGateway('gateway (PostgreSQL)', simUrl, { databaseUrl: db.url });
      targets.push({ ...gw, id: 'gw-pg', store: 'postgres', label: 'Gateway, PostgreSQL', database: db.name });
      progress(`gateway on PostgreSQL at ${gw.url} (pid ${gw.pid}, ${gw.rssStartMb.toFixed(0)} MB RSS)`);
      // Configuration variants (bench/lib/variants.mjs), measured on the chat phases like the baseline.
      if (!ARGS.includes('--no-variants')) {
        for (const v of benchVariants()) {
          const vdb = await createDatabase();
          variantDbs.push(vdb);
          const gwv = await startGateway(v.label, simUrl, { databaseUrl: vdb.url }, [], { GATEWAY_CONFIG: v.config });
          targets.push({ ...gwv, id: v.id, store: 'postgres', baseline: true, variant: v.id, label: v.label, database: vdb.name });
          progress(`${v.label} at ${gwv.url} (pid ${gwv.pid}, ${gwv.rssStartMb.toFixed(0)} MB RSS)`);
        }
      }
      if (CFG.baselineRef) {
        const { commit, root } = prepareBaseline(CFG.baselineRef);
        baseDb = await createDatabase();
        const base = await startGateway(`gateway at ${commit}`, simUrl, { databaseUrl: baseDb.url }, [], {}, root);
        targets.push({ ...base, id: 'gw-base', store: 'postgres', baseline: true, commit, label: `Gateway at ${commit} (baseline), PostgreSQL`, database: baseDb.name });
        progress(`baseline gateway (${commit}) on PostgreSQL at ${base.url} (pid ${base.pid}, ${base.rssStartMb.toFixed(0)} MB RSS)`);
      }
    }
    if (runPglite) {
      const gw = await startGateway('gateway (PGlite)', simUrl, {});
      targets.push({ ...gw, id: 'gw-pglite', store: 'pglite', label: 'Gateway, PGlite' });
      progress(`gateway on PGlite (:memory:) at ${gw.url} (pid ${gw.pid}, ${gw.rssStartMb.toFixed(0)} MB RSS)`);
    }
    if (runPortkey) {
      const pk = await startPortkey(simUrl);
      portkeyInfo = pk;
      targets.push({ ...pk, id: 'portkey' });
      progress(`${pk.label} at ${pk.url} (pid ${pk.pid}, ${pk.rssStartMb.toFixed(0)} MB RSS)`);
    }

    const measured = await measureAll(targets, simInfo);
    for (const t of targets) {
      if (t.kind === 'direct' || t.baseline) continue;
      measured.get(t.id).open = await measureOpenStreams(t, simInfo);
    }
    const gwPgTarget = targets.find((t) => t.id === 'gw-pg');
    if (gwPgTarget) {
      // The same streams on a freshly started gateway: what they cost without the heap the load phases grew.
      const fresh = await startGateway('gateway (PostgreSQL, fresh)', simUrl, { databaseUrl: db.url });
      try { measured.get('gw-pg').openFresh = await measureOpenStreams({ ...fresh, label: 'Gateway, PostgreSQL, freshly started' }, simInfo); } finally { await fresh.proc.stop(); }
      measured.get('gw-pg').storeWork = await storeWorkPerRequest(gwPgTarget).catch(() => null);
      const w = measured.get('gw-pg').storeWork;
      if (w) progress(`PostgreSQL work per request: ${w.transactions.toFixed(2)} transactions, ${w.inserted.toFixed(2)} rows inserted, ${w.updated.toFixed(2)} updated, ${w.fetched.toFixed(2)} fetched`);
    }
    for (const t of targets) if (t.proc) await t.proc.stop();
    const results = targets.map((t) => measured.get(t.id));
    const baselines = {
      ...memoryBaselines(),
      commitMs: db ? await commitLatencyMs(db.url).catch(() => NaN) : NaN,
      commitAsyncMs: db ? await commitLatencyMs(db.url, 200, { synchronous: false }).catch(() => NaN) : NaN,
      roundTrip: db ? await roundTripMs(db.url).catch(() => null) : null,
    };
    if (baselines.roundTrip) progress(`one PostgreSQL round trip (SELECT 1, median): ${f2(baselines.roundTrip.hotMs)} ms back to back, ${f2(baselines.roundTrip.idleMs)} ms after ${baselines.roundTrip.afterMs} ms idle`);
    progress(`one PostgreSQL commit (median round trip): ${f2(baselines.commitMs)} ms; without waiting for the WAL flush: ${f2(baselines.commitAsyncMs)} ms`);
    progress(`RSS of a bare node: ${baselines.nodeMb.toFixed(0)} MB; with the gateway's tokenizer: ${baselines.tokenizerMb.toFixed(0)} MB; with gpt-tokenizer's o200k module: ${baselines.gptTokenizerMb.toFixed(0)} MB; PGlite alone: ${baselines.pgliteMb.toFixed(0)} MB`);

    const verdicts = evaluateTargets(results);
    for (const t of verdicts) progress(`target ${t.name}: ${t.measured} (goal ${t.goal}): ${t.verdict.replace(/\*/g, '')}`);
    const missed = verdicts.some((t) => !t.met);
    if (db && CFG.stages) {
      try {
        stages = await stageTimings(simUrl, { databaseUrl: db.url });
      } catch (error) {
        progress(`stage timings failed: ${error.message}`);
      }
    }
    if (db && (CFG.profile === '1' || (CFG.profile === 'auto' && missed))) {
      try {
        profile = await profileGateway(simUrl, { databaseUrl: db.url });
        profile.note = profileNote(profile);
      } catch (error) {
        progress(`profile failed: ${error.message}`);
      }
    }
    const run = {
      machine, results, pgVersion: db?.version ?? null, portkey: portkeyInfo && { version: portkeyInfo.version, nodeServer: portkeyInfo.nodeServer },
      profile, stages, command, startedAt, baselines, durationS: (performance.now() - t0) / 1000, cfg: CFG,
    };
    mkdirSync(dirname(SAVED), { recursive: true });
    writeFileSync(SAVED, JSON.stringify(run));
    const markdown = report({ ...run, targets: verdicts });
    writeFileSync(CFG.output, `${markdown}\n`);
    progress(`wrote ${relative(process.cwd(), CFG.output) || CFG.output}`);
  } finally {
    await sim.stop();
    for (const child of children) child.kill('SIGKILL');
    for (const d of [db, baseDb, ...variantDbs].filter(Boolean)) {
      await adminSql(`DROP DATABASE IF EXISTS ${d.name} WITH (FORCE)`).then(
        () => progress(`PostgreSQL database ${d.name} dropped`),
        (error) => progress(`could not drop ${d.name}: ${error.message}`),
      );
    }
  }
}

const renderAt = ARGS.indexOf('--render');
(renderAt >= 0 ? Promise.resolve().then(() => render(ARGS[renderAt + 1] && !ARGS[renderAt + 1].startsWith('--') ? ARGS[renderAt + 1] : SAVED)) : main()).catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  killChildren();
  process.exit(1);
});
