/**
 * Where deferred posting spends its CPU (issue 30): the gateway on PostgreSQL with `post: deferred`
 * (the default) and with `post: immediate`, each under --cpu-prof, first in the closed loop (256 in
 * flight), then in an open loop at a fixed rate (BENCH_RATE, default 1500/s), where both serve the
 * same requests. For each: requests per second, the gateway's user and system CPU per request, the
 * load generator's own CPU per request (a closed loop whose answers leave in bursts costs it less too),
 * and the functions whose self time in the closed loop differs most between the two.
 * `node bench/compare-post.mjs` after `npm run build`.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DIR, CFG, progress } from './lib/config.mjs';
import { cpuSplitOf } from './lib/cpu.mjs';
import { createDatabase } from './lib/db.mjs';
import { closedLoop, newPool, openLoop, scenarios } from './lib/load.mjs';
import { cleanEnv, freePort, killChildren, startGateway, startProcess } from './lib/processes.mjs';
import { summarizeProfile } from './lib/profile.mjs';
import { benchVariants } from './lib/variants.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 1500);

/** One loop's figures: answers per second, and µs of CPU per answer (gateway user and system, load generator). */
async function loopFigures(gwPid, run) {
  const gw0 = cpuSplitOf(gwPid);
  const self0 = process.cpuUsage();
  const r = await run();
  const gw1 = cpuSplitOf(gwPid);
  const self = process.cpuUsage(self0);
  const ok = r.results.filter((x) => x.ok).length;
  const us = (seconds) => (seconds / ok) * 1e6;
  return { ok, rps: ok / r.took, userUs: us(gw1.user - gw0.user), systemUs: us(gw1.system - gw0.system), loadGenUs: us((self.user + self.system) / 1e6) };
}

const line = (f) => `${f.rps.toFixed(0)} req/s, gateway ${(f.userUs + f.systemUs).toFixed(0)} µs CPU per request (user ${f.userUs.toFixed(0)}, system ${f.systemUs.toFixed(0)}), load generator ${f.loadGenUs.toFixed(0)} µs`;

async function measure(label, simUrl, extraEnv) {
  const dir = join(BENCH_DIR, '.profile', label);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = await createDatabase();
  const spawned = performance.now();
  const gw = await startGateway(label, simUrl, { databaseUrl: db.url }, ['--cpu-prof', `--cpu-prof-dir=${dir}`], extraEnv);
  const closedPool = newPool(gw.url, CFG.concurrency);
  const openPool = newPool(gw.url, 256);
  const s = scenarios(gw);
  await closedLoop(closedPool, s.chat, CFG.concurrency, 4);
  const from = performance.now();
  const closed = await loopFigures(gw.pid, () => closedLoop(closedPool, s.chat, CFG.concurrency, SECONDS));
  const to = performance.now();
  await openLoop(openPool, s.chat, RATE, 2);
  const open = await loopFigures(gw.pid, () => openLoop(openPool, s.chat, RATE, SECONDS));
  await closedPool.close();
  await openPool.close();
  await gw.proc.stop('SIGINT', 20_000);
  const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f))[0];
  const summary = summarizeProfile(file, from - spawned, to - spawned);
  progress(`${label}: closed loop x${CFG.concurrency}: ${line(closed)}`);
  progress(`${label}: open loop at ${RATE}/s: ${line(open)}`);
  return { label, closed, open, summary };
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
  console.log('\nµs of CPU per request: deferred | immediate');
  for (const [loop, name] of [['closed', `closed loop x${CFG.concurrency}`], ['open', `open loop at ${RATE}/s`]]) {
    for (const key of ['userUs', 'systemUs', 'loadGenUs']) console.log(`${a[loop][key].toFixed(0).padStart(5)} | ${b[loop][key].toFixed(0).padStart(5)} | ${name}: ${{ userUs: 'gateway user', systemUs: 'gateway system', loadGenUs: 'load generator' }[key]}`);
  }
  // Self time per request of each function in the closed loop, in µs, and the differences.
  const perReq = (m) => new Map(m.summary.allFunctions.map((f) => [f.name, (f.ms * 1000) / m.closed.ok]));
  const da = perReq(a);
  const db = perReq(b);
  const names = new Set([...da.keys(), ...db.keys()]);
  const diffs = [...names].map((n) => ({ n, a: da.get(n) ?? 0, b: db.get(n) ?? 0 })).sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b)).slice(0, 25);
  console.log('\nclosed loop, self µs per request (sampled wall time): deferred | immediate | function');
  for (const d of diffs) console.log(`${d.a.toFixed(1).padStart(7)} | ${d.b.toFixed(1).padStart(7)} | ${d.n}`);
  console.log('\ncategories (share %): deferred | immediate');
  for (const c of a.summary.categories) console.log(`${c.name}: ${c.share.toFixed(1)} | ${(b.summary.categories.find((x) => x.name === c.name)?.share ?? 0).toFixed(1)}`);
} finally {
  killChildren();
}
