/**
 * Where deferred posting spends its CPU (issue 30): the gateway on PostgreSQL under the closed loop,
 * once with `post: deferred` (the default) and once with `post: immediate`, each under --cpu-prof;
 * prints requests per second, the gateway's CPU per request and the functions whose self time
 * differs most between the two. `node bench/compare-post.mjs` after `npm run build`.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DIR, CFG, progress } from './lib/config.mjs';
import { cpuSecondsOf } from './lib/cpu.mjs';
import { createDatabase } from './lib/db.mjs';
import { closedLoop, newPool, scenarios } from './lib/load.mjs';
import { cleanEnv, freePort, killChildren, startGateway, startProcess } from './lib/processes.mjs';
import { summarizeProfile } from './lib/profile.mjs';
import { benchVariants } from './lib/variants.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);

async function measure(label, simUrl, extraEnv) {
  const dir = join(BENCH_DIR, '.profile', label);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = await createDatabase();
  const spawned = performance.now();
  const gw = await startGateway(label, simUrl, { databaseUrl: db.url }, ['--cpu-prof', `--cpu-prof-dir=${dir}`], extraEnv);
  const pool = newPool(gw.url, CFG.concurrency);
  const s = scenarios(gw);
  await closedLoop(pool, s.chat, CFG.concurrency, 4);
  const from = performance.now();
  const cpu0 = cpuSecondsOf(gw.pid);
  const run = await closedLoop(pool, s.chat, CFG.concurrency, SECONDS);
  const cpu = cpuSecondsOf(gw.pid) - cpu0;
  const ok = run.results.filter((r) => r.ok).length;
  await pool.close();
  await gw.proc.stop('SIGINT', 20_000);
  const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f))[0];
  const summary = summarizeProfile(file, from - spawned);
  progress(`${label}: ${(ok / run.took).toFixed(0)} req/s, ${((cpu / ok) * 1e6).toFixed(0)} µs CPU per request (${ok} answered 200 of ${run.results.length})`);
  return { label, rps: ok / run.took, cpuPerReqUs: (cpu / ok) * 1e6, ok, summary };
}

try {
  const simPort = await freePort();
  const sim = await startProcess('simulator', ['dist/src/sim/main.js'], {
    env: cleanEnv({ SIM_PORT: String(simPort), SIM_HOST: '127.0.0.1', SIM_LATENCY_MS: String(CFG.simLatencyMs) }), ready: /simulator listening on/,
  });
  progress(`simulator pid ${sim.pid}`);
  const simUrl = `http://127.0.0.1:${simPort}`;
  const immediate = benchVariants().find((v) => v.id === 'gw-immediate');
  const a = await measure('deferred', simUrl, {});
  const b = await measure('immediate', simUrl, { GATEWAY_CONFIG: immediate.config });
  // Self time per request of each function, in µs, and the differences.
  const perReq = (m) => new Map(m.summary.allFunctions.map((f) => [f.name, (f.ms * 1000) / m.ok]));
  const da = perReq(a);
  const db = perReq(b);
  const names = new Set([...da.keys(), ...db.keys()]);
  const diffs = [...names].map((n) => ({ n, a: da.get(n) ?? 0, b: db.get(n) ?? 0 })).sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b)).slice(0, 25);
  console.log('\nself µs per request: deferred | immediate | function');
  for (const d of diffs) console.log(`${d.a.toFixed(1).padStart(7)} | ${d.b.toFixed(1).padStart(7)} | ${d.n}`);
  console.log('\ncategories (share %): deferred | immediate');
  for (const c of a.summary.categories) console.log(`${c.name}: ${c.share.toFixed(1)} | ${(b.summary.categories.find((x) => x.name === c.name)?.share ?? 0).toFixed(1)}`);
} finally {
  killChildren();
}
