#!/usr/bin/env node
/**
 * `npm run bench`: measures the gateway against the simulator at a fixed upstream latency and
 * writes the figures to bench/RESULTS.md. It prints figures; it is not a timed test.
 *
 * Every party is its own child process on this machine: one standalone simulator
 * (dist/src/sim/main.js, SIM_LATENCY_MS), the gateway (dist/src/main.js) pointed at it as a live
 * provider, on PostgreSQL (a fresh gw_bench_<random> database, dropped at the end) and on PGlite
 * (GATEWAY_DATA_DIR=:memory:), and the Portkey open-source gateway (installed by this script into
 * bench/.portkey/). The load comes from this process over undici pools:
 *   - added latency: an open-loop generator at a fixed rate (500 req/s, and 100 req/s), p50/p99
 *     compared with the client calling the simulator directly at the same rate (added = difference);
 *   - throughput: closed loop, N concurrent requests for a fixed time;
 *   - streaming and translated streaming (claude-haiku-4-5 on /v1/chat/completions): time to the
 *     first body byte at the fixed rate, and streams per second in a closed loop;
 *   - resident memory (VmRSS of the gateway process) with 1,000 streams open at once (the simulator
 *     holds them open with a chunk_delay_ms fault).
 * All targets run at once and every phase is measured in rounds that take the targets in turn
 * (rotating the order), so that load from other processes on the machine falls on all of them
 * alike; the CPU other processes took is measured and reported with every figure.
 *
 * Usage: npm run bench            (builds, then runs this file; about 10 minutes)
 *        node bench/run.mjs [--quick] [--no-portkey] [--no-postgres] [--no-pglite]
 * Environment overrides: BENCH_SIM_LATENCY_MS, BENCH_RATE, BENCH_LOW_RATE, BENCH_STREAM_RATE,
 * BENCH_SECONDS (per target and phase), BENCH_ROUNDS, BENCH_WARMUP_SECONDS, BENCH_CONCURRENCY,
 * BENCH_OPEN_STREAMS, BENCH_QUIET_WAIT_SECONDS, BENCH_PROFILE (auto | 1 | 0),
 * BENCH_DATABASE_ADMIN_URL (default postgres://127.0.0.1:5432/postgres), BENCH_PORTKEY_VERSION,
 * BENCH_OUTPUT (default bench/RESULTS.md).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const ARGS = process.argv.slice(2);
const QUICK = ARGS.includes('--quick');

/** A non-negative number from the environment, else the full-run or --quick default. */
function setting(name, full, quick = full) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return QUICK ? quick : full;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return value;
}

const CFG = {
  simLatencyMs: setting('BENCH_SIM_LATENCY_MS', 20),
  rate: setting('BENCH_RATE', 500),
  lowRate: setting('BENCH_LOW_RATE', 100),
  streamRate: setting('BENCH_STREAM_RATE', 500),
  seconds: setting('BENCH_SECONDS', 10, 3),
  rounds: Math.max(1, Math.round(setting('BENCH_ROUNDS', 2, 1))),
  warmupSeconds: setting('BENCH_WARMUP_SECONDS', 2, 1),
  concurrency: setting('BENCH_CONCURRENCY', 64),
  accounts: Math.max(2, Math.round(setting('BENCH_ACCOUNTS', 16))),
  openStreams: setting('BENCH_OPEN_STREAMS', 1000, 1000),
  openStreamChunkDelayMs: 300,
  quietWaitSeconds: setting('BENCH_QUIET_WAIT_SECONDS', 10),
  profile: (process.env.BENCH_PROFILE ?? 'auto').trim() || 'auto',
  adminUrl: process.env.BENCH_DATABASE_ADMIN_URL ?? process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://127.0.0.1:5432/postgres',
  portkeyVersion: process.env.BENCH_PORTKEY_VERSION ?? '1.15.2',
  output: resolve(process.env.BENCH_OUTPUT ?? join(BENCH_DIR, 'RESULTS.md')),
};
const TARGETS = { addedP50Ms: 0.5, addedP99Ms: 2, throughputVsPortkey: 1.5, rssMb: 150 };
const ADMIN_TOKEN = `bench-${randomBytes(8).toString('hex')}`;
const CHAT_MODEL = 'gpt-4o-mini';
const TRANSLATED_MODEL = 'claude-haiku-4-5';
const OPEN_STREAM_MODEL = 'gpt-4o';
const MAX_TOKENS = 24;
const CLK_TCK = (() => { try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; } })();

const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s`;
const progress = (message) => process.stdout.write(`[bench ${elapsed()}] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set();

async function freePort() {
  const server = net.createServer();
  await new Promise((ok, fail) => { server.once('error', fail); server.listen(0, '127.0.0.1', ok); });
  const { port } = server.address();
  await new Promise((ok) => server.close(ok));
  return port;
}

/** The parent's environment without anything that would change what the gateway or simulator does. */
function cleanEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(OPENAI_|ANTHROPIC_|DATABASE_URL$|REDIS_URL$|GATEWAY_|SIM_|PORT$|NODE_OPTIONS$|npm_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** Spawns a process and resolves once a line of its output matches `ready`. */
async function startProcess(name, args, { env, cwd = ROOT, ready, timeoutMs = 60_000 }) {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let tail = '';
  let readyResolve;
  const readyPromise = new Promise((ok) => { readyResolve = ok; });
  const onData = (chunk) => {
    tail = (tail + chunk.toString()).slice(-4000);
    if (ready.test(tail)) readyResolve();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((ok) => child.once('exit', (code, signal) => { children.delete(child); ok({ code, signal }); }));
  const outcome = await Promise.race([
    readyPromise.then(() => 'ready'),
    exited.then(({ code, signal }) => `exited (code ${code}, signal ${signal})`),
    sleep(timeoutMs).then(() => `not ready after ${timeoutMs} ms`),
  ]);
  if (outcome !== 'ready') {
    child.kill('SIGKILL');
    throw new Error(`${name} ${outcome}; output:\n${tail}`);
  }
  return {
    name, child, pid: child.pid, output: () => tail,
    /** SIGTERM (SIGINT for a CPU profile, which node writes on a clean exit), SIGKILL after a grace period. */
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
      if (!done) { child.kill('SIGKILL'); await exited; }
    },
  };
}

function killChildren() {
  for (const child of children) { try { child.kill('SIGKILL'); } catch { /* gone */ } }
}
process.on('exit', killChildren);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { killChildren(); process.exit(130); });

/** Resident set and its high-water mark of a process, in MB (Linux /proc). */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch { return { rssMb: NaN, hwmMb: NaN }; }
}

/** User + system CPU seconds a process has used (Linux /proc). */
function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch { return NaN; }
}

/** Busy and total jiffies of the whole machine (Linux /proc/stat). */
function machineCpu() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = line[3] + (line[4] ?? 0);
    const total = line.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch { return { busy: NaN, total: NaN }; }
}

/** CPU seconds of postgres server processes, split into ours (`ownPids`) and the rest. */
function postgresCpuSeconds(ownPids) {
  let own = 0;
  let other = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
      if (ownPids === null || ownPids.has(Number(name))) own += seconds; else other += seconds;
    } catch { /* exited */ }
  }
  return { own, other };
}

/** Pids of the PostgreSQL backends serving `database` (null: no server in play). */
async function postgresPids(database) {
  if (!database) return null;
  try {
    const rows = await adminSql(`SELECT pid FROM pg_stat_activity WHERE datname = '${database}'`);
    return new Set(rows.map((r) => Number(r.pid)));
  } catch { return null; }
}

/**
 * Where the machine's CPU went during a phase, in % of the whole machine (all cores = 100%): `own`
 * = this script, the simulator and the target; `postgres` = the backends of the target's database;
 * `background` = everything else (e.g. someone else's test run, including its PostgreSQL backends,
 * and the server's shared WAL writer and checkpointer), which makes a phase's figures unreliable.
 */
async function cpuMeter(pids, database) {
  const pgPids = (database ? await postgresPids(database) : null) ?? new Set();
  const read = () => ({ machine: machineCpu(), own: pids.reduce((a, pid) => a + (cpuSecondsOf(pid) || 0), 0), pg: postgresCpuSeconds(pgPids) });
  const before = read();
  return async () => {
    // Backends the pool opened during the phase count as ours too (they had no CPU time before it).
    if (database) for (const pid of (await postgresPids(database)) ?? []) pgPids.add(pid);
    const after = read();
    const machineTicks = after.machine.total - before.machine.total;
    const pct = (seconds) => (seconds * CLK_TCK / machineTicks) * 100;
    const busy = ((after.machine.busy - before.machine.busy) / machineTicks) * 100;
    const own = pct(after.own - before.own);
    const pgShare = Math.max(0, pct(after.pg.own - before.pg.own));
    return { busy, own, postgres: pgShare, background: Math.max(0, busy - own - pgShare) };
  };
}

/** Waits (up to `maxSeconds`) until the machine is quiet: under 20% busy over two consecutive seconds. */
async function waitForQuiet(maxSeconds = CFG.quietWaitSeconds) {
  const start = performance.now();
  let quiet = 0;
  let warned = false;
  let busy = 0;
  while ((performance.now() - start) / 1000 < maxSeconds) {
    const m0 = machineCpu();
    await sleep(1000);
    const m1 = machineCpu();
    busy = ((m1.busy - m0.busy) / (m1.total - m0.total)) * 100;
    if (busy < 20) { if (++quiet >= 2) return { quiet: true, waitedS: (performance.now() - start) / 1000, busy }; continue; }
    quiet = 0;
    if (!warned) { progress(`waiting for the machine to be quiet (other processes use ${busy.toFixed(0)}% of the CPU)`); warned = true; }
  }
  progress(`machine not quiet after ${maxSeconds}s (last second ${busy.toFixed(0)}% busy); measuring anyway (see the background column)`);
  return { quiet: false, waitedS: maxSeconds, busy };
}

// ---------------------------------------------------------------------------------------------
// Load generation

/** 64 distinct prompts, so that nothing keyed by the body sees one request over and over. */
const PROMPTS = Array.from({ length: 64 }, (_, i) => `Hello, this is benchmark prompt number ${i}. Please answer briefly.`);
const chatBodies = (model, stream) => PROMPTS.map((content) => JSON.stringify({
  model, max_tokens: MAX_TOKENS, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content }],
}));
const BODIES = {
  chat: chatBodies(CHAT_MODEL, false),
  stream: chatBodies(CHAT_MODEL, true),
  translated: chatBodies(TRANSLATED_MODEL, true),
  open: chatBodies(OPEN_STREAM_MODEL, true),
  // The direct baseline of the translated stream: the same request in the upstream's own format.
  messages: PROMPTS.map((content) => JSON.stringify({
    model: 'claude-haiku-4-5-20251001', max_tokens: MAX_TOKENS, stream: true, messages: [{ role: 'user', content }],
  })),
};

/**
 * One request: resolves to {ok, latency, ttfb} in ms (ttfb = first body byte; latency = last byte).
 * A stream counts as ok only when it ends with its format's terminator.
 */
async function send(pool, { path, headers, bodies, stream, terminator }, i, onFirstByte) {
  const start = performance.now();
  try {
    const { statusCode, body } = await pool.request({
      method: 'POST', path, headers: typeof headers === 'function' ? headers(i) : headers, body: bodies[i % bodies.length],
    });
    let ttfb = NaN;
    let tail = '';
    for await (const chunk of body) {
      if (Number.isNaN(ttfb)) { ttfb = performance.now() - start; onFirstByte?.(); }
      if (stream) tail = (tail + chunk.toString('latin1')).slice(-200);
    }
    const latency = performance.now() - start;
    const ok = statusCode === 200 && (!stream || tail.includes(terminator));
    return { ok, latency, ttfb, error: ok ? null : `status ${statusCode}${stream ? `, stream tail ${JSON.stringify(tail.slice(-80))}` : ''}` };
  } catch (error) {
    return { ok: false, latency: performance.now() - start, ttfb: NaN, error: String(error?.message ?? error) };
  }
}

const pct = (arr, p) => (arr.length === 0 ? NaN : arr[Math.min(arr.length - 1, Math.max(0, Math.ceil(p * arr.length) - 1))]);

/** Percentiles and rates of a list of request results over `seconds`. */
function summarize(results, seconds) {
  const ok = results.filter((r) => r.ok);
  const sorted = (key) => ok.map((r) => r[key]).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const lat = sorted('latency');
  const ttfb = sorted('ttfb');
  return {
    sent: results.length, ok: ok.length, errors: results.length - ok.length,
    firstError: results.find((r) => !r.ok)?.error ?? null,
    rps: ok.length / seconds,
    p50: pct(lat, 0.5), p99: pct(lat, 0.99), max: lat.at(-1) ?? NaN,
    ttfbP50: pct(ttfb, 0.5), ttfbP99: pct(ttfb, 0.99),
  };
}

/**
 * Open loop: request i is sent at start + i/rate whatever the answers do; resolves when all are
 * answered. A target that falls more than a second behind (more than max(256, rate) requests in
 * flight) is overloaded: sending stops there, and the latencies measured are mostly queueing.
 */
async function openLoop(pool, scenario, rate, seconds) {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const maxInFlight = Math.max(256, rate);
  const pending = [];
  const start = performance.now() + 5;
  let i = 0;
  let inFlight = 0;
  let overloadedAfter = null;
  await new Promise((done) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        if (inFlight >= maxInFlight) { overloadedAfter = (now - start) / 1000; return done(); }
        inFlight += 1;
        pending.push(send(pool, scenario, i).finally(() => { inFlight -= 1; }));
        i += 1;
      }
      if (i >= total) return done();
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    tick();
  });
  const results = await Promise.all(pending);
  return { results, took: (performance.now() - start) / 1000, overloadedAfter };
}

/** Closed loop: `concurrency` workers, each sending its next request when the last one is answered. */
async function closedLoop(pool, scenario, concurrency, seconds) {
  const results = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  let n = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) results.push(await send(pool, scenario, n++));
  }));
  return { results, took: (performance.now() - start) / 1000, overloadedAfter: null };
}

/** One target's slices of a phase, merged: percentiles over every request, rates over the summed time. */
function aggregate(slices, rate) {
  const results = slices.flatMap((x) => x.results);
  const took = slices.reduce((a, x) => a + x.took, 0);
  const summary = summarize(results, took);
  const cpuSeconds = slices.reduce((a, x) => a + (x.targetCpu ?? 0), 0);
  const weighted = (key) => slices.reduce((a, x) => a + x.cpu[key] * x.took, 0) / took;
  const overloadedAfter = slices.find((x) => x.overloadedAfter !== null)?.overloadedAfter ?? null;
  return {
    ...summary, rate, overloadedAfter,
    overloaded: rate !== undefined && (overloadedAfter !== null || summary.rps < 0.95 * rate),
    cpuUsPerRequest: summary.ok > 0 && slices.every((x) => x.targetCpu !== null) ? (cpuSeconds * 1e6) / summary.ok : NaN,
    cpu: { busy: weighted('busy'), own: weighted('own'), postgres: weighted('postgres'), background: weighted('background'), backgroundMax: Math.max(...slices.map((x) => x.cpu.background)) },
  };
}

// ---------------------------------------------------------------------------------------------
// Targets: the simulator called directly, the gateway (two stores), Portkey

const newPool = (url, connections) => new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 120_000 });

function scenarios(target) {
  const json = { 'content-type': 'application/json' };
  if (target.kind === 'direct') {
    return {
      chat: { path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.chat },
      stream: { path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.stream, stream: true, terminator: '[DONE]' },
      translated: {
        path: '/v1/messages', headers: { ...json, 'x-api-key': 'sk-bench', 'anthropic-version': '2023-06-01' },
        bodies: BODIES.messages, stream: true, terminator: 'message_stop',
      },
      open: { path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.open, stream: true, terminator: '[DONE]' },
    };
  }
  if (target.kind === 'gateway') {
    const headers = { ...json, authorization: `Bearer ${target.key}` };
    const keys = target.extraKeys ?? [target.key];
    return {
      chat: { path: '/v1/chat/completions', headers, bodies: BODIES.chat },
      chatMulti: { path: '/v1/chat/completions', headers: (i) => ({ ...json, authorization: `Bearer ${keys[i % keys.length]}` }), bodies: BODIES.chat },
      stream: { path: '/v1/chat/completions', headers, bodies: BODIES.stream, stream: true, terminator: '[DONE]' },
      translated: { path: '/v1/chat/completions', headers, bodies: BODIES.translated, stream: true, terminator: '[DONE]' },
      open: { path: '/v1/chat/completions', headers, bodies: BODIES.open, stream: true, terminator: '[DONE]' },
    };
  }
  const portkey = (provider) => ({
    ...json, authorization: 'Bearer sk-bench', 'x-portkey-provider': provider, 'x-portkey-custom-host': `${target.simUrl}/v1`,
  });
  return {
    chat: { path: '/v1/chat/completions', headers: portkey('openai'), bodies: BODIES.chat },
    stream: { path: '/v1/chat/completions', headers: portkey('openai'), bodies: BODIES.stream, stream: true, terminator: '[DONE]' },
    translated: { path: '/v1/chat/completions', headers: portkey('anthropic'), bodies: BODIES.translated, stream: true, terminator: '[DONE]' },
    open: { path: '/v1/chat/completions', headers: portkey('openai'), bodies: BODIES.open, stream: true, terminator: '[DONE]' },
  };
}

async function simControl(simUrl, method, path, body) {
  const res = await fetch(`${simUrl}${path}`, {
    method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`simulator ${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Opens `count` streams at once (ramped over about a second) and samples the target's RSS while they are all open. */
async function openStreams(target, simUrl, count) {
  const scenario = scenarios(target).open;
  const pool = newPool(target.url, count + 16);
  await simControl(simUrl, 'POST', '/__sim/faults', { model: OPEN_STREAM_MODEL, fault: { chunk_delay_ms: CFG.openStreamChunkDelayMs } });
  const before = target.pid ? memoryOf(target.pid) : null;
  let opened = 0;
  let allOpenAt = null;
  let peak = 0;
  let rssAllOpen = NaN;
  const sampler = setInterval(() => {
    if (!target.pid) return;
    const { rssMb } = memoryOf(target.pid);
    if (rssMb > peak) peak = rssMb;
  }, 50);
  const start = performance.now();
  const pending = [];
  for (let i = 0; i < count; i++) {
    pending.push(send(pool, scenario, i, () => {
      opened += 1;
      if (opened === count) allOpenAt = performance.now();
    }));
    if (i % 10 === 9) await sleep(10);
  }
  // Hold: every stream lasts (events - 1) x chunk delay (about 8 s); sample once all are open.
  while (allOpenAt === null && performance.now() - start < 20_000) await sleep(20);
  if (allOpenAt !== null && target.pid) {
    await sleep(500);
    rssAllOpen = memoryOf(target.pid).rssMb;
  }
  const results = await Promise.all(pending);
  clearInterval(sampler);
  await pool.close();
  await simControl(simUrl, 'DELETE', '/__sim/faults');
  const summary = summarize(results, (performance.now() - start) / 1000);
  const after = target.pid ? memoryOf(target.pid) : null;
  return {
    count, opened, ok: summary.ok, errors: summary.errors, firstError: summary.firstError,
    secondsToOpenAll: allOpenAt === null ? NaN : (allOpenAt - start) / 1000,
    rssStartMb: target.rssStartMb ?? NaN, rssBeforeMb: before?.rssMb ?? NaN, rssAllOpenMb: rssAllOpen, rssPeakMb: peak || NaN, hwmMb: after?.hwmMb ?? NaN, rssAfterMb: after?.rssMb ?? NaN,
    ttfbP50: summary.ttfbP50, ttfbP99: summary.ttfbP99,
  };
}

const fmtErr = (r) => (r.errors ? ` ERRORS ${r.errors}/${r.sent} (${r.firstError})` : '');
const ms = (v) => (Number.isNaN(v) ? 'n/a' : `${v.toFixed(2)} ms`);

/** The measured phases, in order. Open-loop phases have a rate; closed-loop ones run CFG.concurrency in flight. */
const PHASES = [
  { key: 'latencyLow', scenario: 'chat', rate: CFG.lowRate, title: `non-streaming at ${CFG.lowRate} req/s` },
  { key: 'latency', scenario: 'chat', rate: CFG.rate, title: `non-streaming at ${CFG.rate} req/s` },
  { key: 'throughput', scenario: 'chat', title: `non-streaming closed loop x${CFG.concurrency}` },
  // Diagnostic: the same load spread over CFG.accounts accounts, to show what one account's balance row costs.
  { key: 'throughputMulti', scenario: 'chatMulti', title: `non-streaming closed loop x${CFG.concurrency} over ${CFG.accounts} accounts`, only: 'gateway' },
  { key: 'streamLatency', scenario: 'stream', rate: CFG.streamRate, title: `streaming at ${CFG.streamRate}/s` },
  { key: 'streamThroughput', scenario: 'stream', title: `streaming closed loop x${CFG.concurrency}` },
  { key: 'translatedLatency', scenario: 'translated', rate: CFG.streamRate, title: `translated streaming at ${CFG.streamRate}/s` },
  { key: 'translatedThroughput', scenario: 'translated', title: `translated streaming closed loop x${CFG.concurrency}` },
];

function phaseLine(phase, r) {
  const cpu = `[machine ${r.cpu.busy.toFixed(0)}% busy, background ${r.cpu.background.toFixed(0)}%${r.cpu.backgroundMax > r.cpu.background + 5 ? ` (max ${r.cpu.backgroundMax.toFixed(0)}%)` : ''}]`;
  const load = phase.rate === undefined
    ? `${r.rps.toFixed(0)}/s`
    : `served ${r.rps.toFixed(0)}/s${r.overloaded ? ` OVERLOADED${r.overloadedAfter !== null ? ` (stopped after ${r.overloadedAfter.toFixed(1)}s)` : ''}` : ''}`;
  const lat = phase.scenario === 'chat' ? `p50 ${ms(r.p50)} p99 ${ms(r.p99)}` : `TTFB p50 ${ms(r.ttfbP50)} p99 ${ms(r.ttfbP99)}, whole stream p50 ${ms(r.p50)}`;
  return `${load}, ${lat} ${cpu}${fmtErr(r)}`;
}

/**
 * Samples pg_stat_activity of `database` every 20 ms until stopped: what the gateway's backends are
 * doing (running, waiting on a lock, idle in a transaction waiting for the gateway) and on which statement.
 */
async function sampleActivity(database, carry = { samples: 0, counts: new Map() }) {
  const client = new pg.Client({ connectionString: withUser(CFG.adminUrl).toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query(
        `SELECT state, coalesce(wait_event_type || ':' || wait_event, 'on CPU') AS wait, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state <> 'idle'`, [database]);
      carry.samples += 1;
      for (const r of rows) {
        const key = JSON.stringify([r.state, r.state === 'active' ? r.wait : 'waiting for the gateway', r.query]);
        carry.counts.set(key, (carry.counts.get(key) ?? 0) + 1);
      }
      await sleep(20);
    }
  })();
  return { async stop() { running = false; await loop.catch(() => undefined); await client.end(); return carry; } };
}

/** The sampled backend states, as average numbers of backends per (state, wait, statement), most first. */
function summarizeActivity({ samples, counts }) {
  return [...counts].map(([key, n]) => { const [state, wait, query] = JSON.parse(key); return { state, wait, query, avg: n / samples }; })
    .sort((a, b) => b.avg - a.avg);
}

/**
 * Runs every phase against every target: after a warm-up of each, CFG.rounds rounds each give every
 * target (in an order rotated per round) CFG.seconds / CFG.rounds of the load, so that a burst of
 * load from other processes falls on all targets alike.
 */
async function measureAll(targets, sim) {
  const out = new Map(targets.map((t) => [t.id, { label: t.label, kind: t.kind, store: t.store }]));
  const pools = new Map(targets.map((t) => [t.id, { open: newPool(t.url, 256), closed: newPool(t.url, CFG.concurrency) }]));
  const sliceSeconds = CFG.seconds / CFG.rounds;
  const run = (t, phase, seconds) => {
    const scenario = scenarios(t)[phase.scenario];
    const { open, closed } = pools.get(t.id);
    return phase.rate === undefined ? closedLoop(closed, scenario, CFG.concurrency, seconds) : openLoop(open, scenario, phase.rate, seconds);
  };
  for (const phase of PHASES) {
    const phaseTargets = targets.filter((t) => !phase.only || t.kind === phase.only);
    if (phaseTargets.length === 0) continue;
    await waitForQuiet();
    progress(`phase: ${phase.title}: warm-up, then ${CFG.rounds} x ${sliceSeconds.toFixed(1)}s per target`);
    for (const t of phaseTargets) await run(t, phase, CFG.warmupSeconds);
    const slices = new Map(phaseTargets.map((t) => [t.id, []]));
    const waits = new Map();
    for (let round = 0; round < CFG.rounds; round++) {
      const order = phaseTargets.map((_, i) => phaseTargets[(i + round) % phaseTargets.length]);
      for (const t of order) {
        const meter = await cpuMeter([process.pid, sim.pid, t.pid].filter(Boolean), t.database);
        const sampler = t.database && phase.scenario.startsWith('chat') && phase.rate === undefined ? await sampleActivity(t.database, waits.get(t.id)) : null;
        const cpu0 = t.pid ? cpuSecondsOf(t.pid) : null;
        const slice = await run(t, phase, sliceSeconds);
        slice.targetCpu = t.pid ? cpuSecondsOf(t.pid) - cpu0 : null;
        slice.cpu = await meter();
        if (sampler) waits.set(t.id, await sampler.stop());
        slices.get(t.id).push(slice);
      }
    }
    for (const t of phaseTargets) {
      const r = aggregate(slices.get(t.id), phase.rate);
      if (waits.has(t.id)) r.waits = summarizeActivity(waits.get(t.id));
      out.get(t.id)[phase.key] = r;
      progress(`${t.label}: ${phase.title}: ${phaseLine(phase, r)}`);
      if (r.waits) progress(`${t.label}: ${phase.title}: PostgreSQL backends on average: ${r.waits.slice(0, 3).map((w) => `${w.avg.toFixed(1)} ${w.state} ${w.wait} "${w.query.slice(0, 40)}"`).join('; ')}`);
    }
  }
  for (const { open, closed } of pools.values()) { await open.close(); await closed.close(); }
  return out;
}

/** The open-streams phase of one target. */
async function measureOpenStreams(target, sim) {
  await waitForQuiet();
  await simControl(sim.url, 'POST', '/__sim/reset');
  const meter = await cpuMeter([process.pid, sim.pid, target.pid], target.database);
  const r = await openStreams(target, sim.url, CFG.openStreams);
  r.cpu = await meter();
  r.cpu.backgroundMax = r.cpu.background;
  progress(`${target.label}: ${CFG.openStreams} open streams: ${r.opened}/${r.count} open after ${r.secondsToOpenAll.toFixed(1)}s, RSS ${r.rssStartMb.toFixed(0)} MB at start, ${r.rssBeforeMb.toFixed(0)} MB before, ${r.rssAllOpenMb.toFixed(0)} MB all open (peak ${r.rssPeakMb.toFixed(0)} MB) [background ${r.cpu.background.toFixed(0)}%]${r.errors ? ` ERRORS ${r.errors} (${r.firstError})` : ''}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Gateway, PostgreSQL, Portkey

function withUser(raw) {
  const url = new URL(raw);
  if (!url.username && !process.env.PGUSER) url.username = process.env.USER || os.userInfo().username;
  return url;
}

async function adminSql(sql) {
  const client = new pg.Client({ connectionString: withUser(CFG.adminUrl).toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try { return (await client.query(sql)).rows; } finally { await client.end(); }
}

async function createDatabase() {
  const name = `gw_bench_${randomBytes(6).toString('hex')}`;
  const [{ version }] = await adminSql('SELECT version()');
  await adminSql(`CREATE DATABASE ${name}`);
  const url = withUser(CFG.adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), version: String(version).split(' on ')[0] };
}

async function startGateway(label, simUrl, store, nodeFlags = []) {
  const port = await freePort();
  const env = cleanEnv({
    PORT: String(port), GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_DATA_DIR: ':memory:',
    OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${simUrl}/v1`, ANTHROPIC_API_KEY: 'sk-bench', ANTHROPIC_BASE_URL: simUrl,
    ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
  });
  const proc = await startProcess(label, [...nodeFlags, 'dist/src/main.js'], { env, ready: /gateway listening on/ });
  if (/simulator http/.test(proc.output())) throw new Error(`${label} started its own simulator; the bench needs it to use ${simUrl}`);
  const url = `http://127.0.0.1:${port}`;
  const res = await fetch(`${url}/admin/accounts`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ balance_usd: '1000000' }),
  });
  if (res.status !== 200 && res.status !== 201) throw new Error(`${label}: POST /admin/accounts answered ${res.status}: ${await res.text()}`);
  const account = await res.json();
  // The account's rate limits (config defaults: 6,000 req/min, 256 concurrent) would refuse this load:
  // set them out of reach rather than off, so that admission control still runs on every request.
  const high = { requests_per_minute: 1_000_000_000, tokens_per_minute: 1_000_000_000_000, concurrent_requests: 1_000_000 };
  const patch = await fetch(`${url}/admin/accounts/${account.id}`, {
    method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ limits: high }),
  });
  if (patch.status !== 200 && patch.status !== 404) throw new Error(`${label}: PATCH /admin/accounts/${account.id} answered ${patch.status}: ${await patch.text()}`);
  const extraKeys = [account.key];
  for (let i = 1; i < CFG.accounts; i++) {
    const extra = await (await fetch(`${url}/admin/accounts`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ balance_usd: '1000000' }),
    })).json();
    await fetch(`${url}/admin/accounts/${extra.id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ limits: high }),
    });
    extraKeys.push(extra.key);
  }
  return { kind: 'gateway', label, url, pid: proc.pid, key: account.key, accountId: account.id, extraKeys, proc, rssStartMb: memoryOf(proc.pid).rssMb };
}

const PORTKEY_DIR = join(BENCH_DIR, '.portkey');
const PORTKEY_ENTRY = join(PORTKEY_DIR, 'node_modules/@portkey-ai/gateway/build/start-server.js');

function ensurePortkey() {
  const manifest = {
    name: 'bench-portkey', private: true,
    description: 'The Portkey open-source gateway for bench/run.mjs (installed by it; not part of the gateway).',
    dependencies: { '@portkey-ai/gateway': CFG.portkeyVersion, '@hono/node-server': '1.13.5' },
    overrides: { '@hono/node-server': '1.13.5' },
  };
  const file = join(PORTKEY_DIR, 'package.json');
  const wanted = JSON.stringify(manifest, null, 2) + '\n';
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (existsSync(PORTKEY_ENTRY) && current === wanted) return;
  progress(`installing @portkey-ai/gateway@${CFG.portkeyVersion} into ${relative(ROOT, PORTKEY_DIR)}/`);
  mkdirSync(PORTKEY_DIR, { recursive: true });
  writeFileSync(file, wanted);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PORTKEY_DIR, stdio: 'inherit', env: cleanEnv({}) });
  if (r.status !== 0 || !existsSync(PORTKEY_ENTRY)) throw new Error(`npm install in ${PORTKEY_DIR} failed (status ${r.status})`);
}

async function startPortkey(simUrl) {
  const port = await freePort();
  const proc = await startProcess('portkey', [PORTKEY_ENTRY, `--port=${port}`, '--headless'], {
    cwd: PORTKEY_DIR, env: cleanEnv({ NODE_ENV: 'production' }), ready: /Ready for connections/,
  });
  const version = JSON.parse(readFileSync(join(PORTKEY_DIR, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')).version;
  const nodeServer = JSON.parse(readFileSync(join(PORTKEY_DIR, 'node_modules/@hono/node-server/package.json'), 'utf8')).version;
  return { kind: 'portkey', label: `Portkey ${version}`, url: `http://127.0.0.1:${port}`, pid: proc.pid, simUrl, proc, version, nodeServer, rssStartMb: memoryOf(proc.pid).rssMb };
}

// ---------------------------------------------------------------------------------------------
// CPU profile summary

/** Self time per function and per origin, leaving out the first `skipMs` of the profile (start-up, module loading). */
function summarizeProfile(file, skipMs = 0) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < skipMs * 1000) continue;
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + delta);
  }
  const category = (url, fn) => {
    if (!url) return fn === '(garbage collector)' ? 'GC' : fn === '(idle)' ? 'idle' : fn === '(program)' ? 'V8/native (program)' : 'native';
    if (url.startsWith('node:')) return 'node core (net, http, streams)';
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (m) return m[1];
    if (url.includes('/dist/src/')) return 'gateway code (dist/src)';
    return 'other';
  };
  const shortUrl = (url) => url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '').replace(/.*node_modules\//, '');
  const fns = new Map();
  const cats = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const node = byId.get(id);
    const { functionName, url, lineNumber } = node.callFrame;
    const cat = category(url, functionName);
    if (cat === 'idle') { idle += us; continue; }
    total += us;
    cats.set(cat, (cats.get(cat) ?? 0) + us);
    const key = `${functionName || '(anonymous)'}${url ? ` ${shortUrl(url)}:${lineNumber + 1}` : ''}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => ({ name, ms: us / 1000, share: (us / total) * 100 }));
  return { busyMs: total / 1000, idleMs: idle / 1000, functions: top(fns, 15), allFunctions: top(fns, 200), categories: top(cats, 10) };
}

async function profileGateway(simUrl, store) {
  const dir = join(BENCH_DIR, '.profile');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const spawnedAt = performance.now();
  const gw = await startGateway('gateway (PostgreSQL, --cpu-prof)', simUrl, store, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const s = scenarios(gw);
  const pool = newPool(gw.url, 256);
  await waitForQuiet();
  progress(`profile: gateway on PostgreSQL with --cpu-prof: ${CFG.seconds}s at ${CFG.lowRate} req/s, then closed loop x${CFG.concurrency} for ${CFG.seconds}s`);
  await openLoop(pool, s.chat, CFG.lowRate, CFG.warmupSeconds);
  const loadFrom = performance.now();
  const lat = aggregate([{ ...(await openLoop(pool, s.chat, CFG.lowRate, CFG.seconds)), targetCpu: null, cpu: { busy: 0, own: 0, postgres: 0, background: 0 } }], CFG.lowRate);
  const tputPool = newPool(gw.url, CFG.concurrency);
  const tput = aggregate([{ ...(await closedLoop(tputPool, s.chat, CFG.concurrency, CFG.seconds)), targetCpu: null, cpu: { busy: 0, own: 0, postgres: 0, background: 0 } }]);
  await tputPool.close();
  await pool.close();
  await gw.proc.stop('SIGINT', 20_000);
  const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f))[0];
  if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
  const summary = summarizeProfile(file, loadFrom - spawnedAt);
  progress(`profile: ${relative(ROOT, file)}; top: ${summary.functions.slice(0, 3).map((f) => `${f.name} ${f.share.toFixed(1)}%`).join(', ')}`);
  return { ...summary, file: relative(ROOT, file), latency: lat, throughput: tput };
}

/** PostgreSQL work per non-streaming request: transactions and rows, from pg_stat_database around `n` requests. */
async function storeWorkPerRequest(target, n = 200) {
  const snap = async () => (await adminSql(`SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_returned, tup_fetched FROM pg_stat_database WHERE datname = '${target.database}'`))[0];
  const pool = newPool(target.url, 8);
  await sleep(1500);
  const before = await snap();
  let ok = 0;
  let i = 0;
  await Promise.all(Array.from({ length: 8 }, async () => { while (i < n) if ((await send(pool, scenarios(target).chat, i++)).ok) ok += 1; }));
  await pool.close();
  await sleep(11_000); // an idle backend reports its counters up to 10 s later
  const after = await snap();
  const per = (k) => (Number(after[k]) - Number(before[k])) / ok;
  return { requests: ok, transactions: per('xact_commit') + per('xact_rollback'), inserted: per('tup_inserted'), updated: per('tup_updated'), fetched: per('tup_fetched') };
}

/**
 * The floor under every metered request: the median time of one committed single-row insert on
 * this PostgreSQL (a round trip and a WAL flush), timed from a client on this machine, one at a time.
 */
async function commitLatencyMs(databaseUrl, n = 200) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('CREATE TABLE bench_commit (n int)');
    const times = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await client.query('INSERT INTO bench_commit VALUES ($1)', [i]);
      times.push(performance.now() - start);
    }
    await client.query('DROP TABLE bench_commit');
    return times.sort((a, b) => a - b)[Math.floor(n / 2)];
  } finally {
    await client.end();
  }
}

/** RSS of a bare node process, and of one that has loaded the o200k tokenizer the gateway counts tokens with. */
function memoryBaselines() {
  const rssOf = (code) => {
    try {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', `${code}; console.log(process.memoryUsage().rss)`], { cwd: ROOT, encoding: 'utf8' });
      return Number(out.trim()) / 2 ** 20;
    } catch { return NaN; }
  };
  return { nodeMb: rssOf(''), tokenizerMb: rssOf("await import('gpt-tokenizer/encoding/o200k_base')") };
}

// ---------------------------------------------------------------------------------------------
// Report

const f2 = (v) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(2));
const f0 = (v) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(0));
const signed = (v) => (Number.isNaN(v) ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
const errCell = (...rs) => {
  const errors = rs.filter(Boolean).reduce((a, r) => a + (r.errors ?? 0), 0);
  const sent = rs.filter(Boolean).reduce((a, r) => a + (r.sent ?? r.count ?? 0), 0);
  return errors === 0 ? '0' : `${errors}/${sent}`;
};
/** The most CPU other processes took during any of the phases of a row, in % of the machine. */
const bgCell = (...rs) => {
  const v = Math.max(...rs.filter(Boolean).map((r) => r.cpu?.background ?? 0));
  return v > 15 ? `**${v.toFixed(0)}%**` : `${v.toFixed(0)}%`;
};

/** Data-driven reasons for the gateway's figures (PostgreSQL row against Portkey's and the direct one). */
function explain(rows, baselines) {
  const gw = rows.find((r) => r.kind === 'gateway' && r.store === 'postgres');
  const pk = rows.find((r) => r.kind === 'portkey');
  const out = [];
  if (!gw) return out;
  const waits = gw.throughput.waits ?? [];
  const lockWaits = waits.filter((w) => w.wait.startsWith('Lock:')).reduce((a, w) => a + w.avg, 0);
  const lockedAccount = waits.filter((w) => w.wait.startsWith('Lock:') && /accounts/.test(w.query)).reduce((a, w) => a + w.avg, 0);
  const idleInTx = waits.filter((w) => w.state === 'idle in transaction').reduce((a, w) => a + w.avg, 0);
  const walSync = waits.filter((w) => /WAL(Sync|Write)/.test(w.wait)).reduce((a, w) => a + w.avg, 0);
  const cores = os.cpus().length;
  const pgUs = (r) => (r && r.rps > 0 ? ((r.cpu.postgres / 100) * cores / r.rps) * 1e6 : NaN);
  if (waits.length) {
    const onCpu = waits.filter((w) => w.wait === 'on CPU' || w.wait === '').reduce((a, w) => a + w.avg, 0);
    const work = gw.storeWork;
    out.push(`The store: money moves in batches (one \`ledger_batch\` call per batch of the reserves, settles and releases that arrived while the previous batch was in flight: one round trip, one commit, each account row locked once)` +
      (work ? `, ${work.transactions.toFixed(2)} transactions per request at 8 in flight` : '') +
      `. During the one-account closed loop, of the pool's 10 PostgreSQL backends on average ${onCpu.toFixed(1)} were running, ${lockWaits.toFixed(1)} waiting on a row lock (${lockedAccount.toFixed(1)} on the account's row, batches queued behind the one holding it until its commit) and ${walSync.toFixed(1)} flushing WAL.`);
  }
  if (gw.throughputMulti) {
    const gain = gw.throughputMulti.rps / gw.throughput.rps;
    const mw = gw.throughputMulti.waits ?? [];
    const mLocks = mw.filter((w) => w.wait.startsWith('Lock:')).reduce((a, w) => a + w.avg, 0);
    const mIdle = mw.filter((w) => w.state === 'idle in transaction').reduce((a, w) => a + w.avg, 0);
    out.push(`Over ${CFG.accounts} accounts the gateway served ${gw.throughputMulti.rps.toFixed(0)} req/s against ${gw.throughput.rps.toFixed(0)} on one (${gain.toFixed(1)}x)` +
      (mw.length ? `; the lock waits fell to ${mLocks.toFixed(1)} backends and ${mIdle.toFixed(1)} backends sat idle in a transaction waiting for the gateway` : '') +
      (gain < 1.2 ? `: with the row lock gone the next limit is CPU, the gateway's event loop and PostgreSQL sharing the ${cores} cores with the simulator and the load generator.` : `: the account row is the first limit; past it the limit is CPU.`));
  }
  if (pk) {
    const ratio = gw.throughput.cpuUsPerRequest / pk.throughput.cpuUsPerRequest;
    out.push(`CPU per request: the gateway process used ${gw.throughput.cpuUsPerRequest.toFixed(0)} µs per non-streaming request (${ratio.toFixed(1)}x Portkey's ${pk.throughput.cpuUsPerRequest.toFixed(0)} µs), and its PostgreSQL backends about ${f0(pgUs(gw.throughput))} µs more (${f0(gw.throughput.cpu.postgres)}% of the machine); Portkey has no store and no metering. Streaming: ${f0(gw.streamThroughput.cpuUsPerRequest)} µs against Portkey's ${f0(pk.streamThroughput.cpuUsPerRequest)} µs per stream; translated: ${f0(gw.translatedThroughput.cpuUsPerRequest)} µs against ${f0(pk.translatedThroughput.cpuUsPerRequest)} µs. With everything on ${cores} cores, the store's CPU comes out of the gateway's throughput.`);
  }
  const direct = rows.find((r) => r.kind === 'direct');
  if (gw.latencyLow && direct?.latencyLow) {
    const added = (r, k) => (r?.[k] ? r[k].p50 - direct[k].p50 : NaN);
    const added99 = (r, k) => (r?.[k] ? r[k].p99 - direct[k].p99 : NaN);
    out.push(`Added latency: at ${CFG.lowRate} req/s the gateway added ${f2(added(gw, 'latencyLow'))} / ${f2(added99(gw, 'latencyLow'))} ms (p50 / p99)` +
      (pk ? ` and Portkey, a proxy with no store and no metering, ${f2(added(pk, 'latencyLow'))} / ${f2(added99(pk, 'latencyLow'))} ms: on this machine one more process hop costs milliseconds, not microseconds` : '') +
      `. On top of the hop, every metered request waits for two commits on its critical path: the reserve before the upstream call (no overspend) and the settle before the answer's last byte (an answer completes only once it is billed, so a crash cannot deliver unbilled work)` +
      (Number.isFinite(baselines?.commitMs) ? `; one commit takes ${f2(baselines.commitMs)} ms here (median, one client)` : '') +
      `. At ${CFG.rate} req/s it added ${f2(added(gw, 'latency'))} / ${f2(added99(gw, 'latency'))} ms` + (pk ? ` (Portkey ${f2(added(pk, 'latency'))} / ${f2(added99(pk, 'latency'))} ms)` : '') +
      `${gw.latency.overloaded ? `, past its capacity on one account (it served ${gw.latency.rps.toFixed(0)} req/s), so that figure is queueing` : `, with the machine ${f0(gw.latency.cpu?.busy)}% busy: each hop also waits for a core`}.`);
  }
  if (gw.open && baselines) {
    out.push(`Memory: the gateway is at ${f0(gw.open.rssStartMb)} MB resident right after start, before any request; ${f0(baselines.tokenizerMb - baselines.nodeMb)} MB of that is the o200k tokenizer's table (a bare node is ${f0(baselines.nodeMb)} MB; node with the tokenizer ${f0(baselines.tokenizerMb)} MB). ${CFG.openStreams} open streams added ${f0(gw.open.rssAllOpenMb - gw.open.rssBeforeMb)} MB to the idle RSS (${f0(gw.open.rssBeforeMb)} -> ${f0(gw.open.rssAllOpenMb)} MB).`);
  }
  return out;
}

function report({ machine, results, pgVersion, portkey, profile, targets, command, startedAt, durationS, baselines }) {
  const direct = results.find((r) => r.kind === 'direct');
  const rows = results;
  const L = [];
  L.push('# Gateway benchmark results', '');
  L.push(`Generated by \`${command}\` (bench/run.mjs) on ${startedAt.toISOString()} in ${durationS.toFixed(0)} s. Figures from one run; rerun to refresh.`, '');
  L.push('## Machine', '');
  L.push('| | |', '|---|---|');
  L.push(`| CPU | ${machine.cpu} |`, `| Cores | ${machine.cores} |`, `| RAM | ${machine.ramGb.toFixed(1)} GB |`);
  L.push(`| OS | ${machine.os} |`, `| Node | ${machine.node} |`, `| PostgreSQL | ${pgVersion ?? 'not run'} (127.0.0.1:5432, same machine) |`);
  if (portkey) L.push(`| Portkey | @portkey-ai/gateway ${portkey.version} with @hono/node-server ${portkey.nodeServer} (npm override), NODE_ENV=production, --headless |`);
  const bgs = rows.flatMap((r) => [...PHASES.map((p) => r[p.key]), r.open].filter(Boolean).map((x) => x.cpu.background));
  L.push(`| Other processes during the run | ${(bgs.reduce((a, b) => a + b, 0) / bgs.length).toFixed(0)}% of the machine on average over the measurements (${Math.max(...bgs).toFixed(0)}% at most) |`);
  L.push('');
  L.push('## Setup', '');
  L.push(`- Every party is a separate process on this machine: the simulator (\`node dist/src/sim/main.js\`, SIM_LATENCY_MS=${CFG.simLatencyMs}: ${CFG.simLatencyMs} ms before every answer's headers, then the stream's events back to back), the gateway (\`node dist/src/main.js\` with OPENAI_/ANTHROPIC_ key and base URL pointing at the simulator, so no built-in simulator), Portkey, PostgreSQL, and the load generator (this script, undici pools, HTTP/1.1 keep-alive). All share the ${machine.cores} cores, so every figure includes the load generator's and the simulator's own CPU use.`);
  L.push(`- Requests: chat \`${CHAT_MODEL}\`, \`max_tokens: ${MAX_TOKENS}\` (a ${MAX_TOKENS}-token answer, ${MAX_TOKENS + 3} SSE events when streamed), 64 distinct prompts in rotation. The gateway meters every request (reserve, then settle to usage rows) on one account with a $1,000,000 balance.`);
  L.push(`- Latency: open loop at a fixed rate (${CFG.rate} req/s non-streaming, also ${CFG.lowRate} req/s to show the overhead without queueing; ${CFG.streamRate}/s streaming) for ${CFG.seconds} s per target after a ${CFG.warmupSeconds} s warm-up; each request timed from its send to its last byte (TTFB: to its first body byte). *Added* = the target's percentile minus the same percentile of the client calling the simulator directly at the same rate. A target that falls more than a second behind (more than max(256, rate) requests in flight) is marked overloaded and the phase stops there: its latencies are then queueing, not overhead.`);
  L.push(`- Throughput: closed loop, ${CFG.concurrency} requests in flight for ${CFG.seconds} s per target; answers with status 200 (and, for streams, a complete stream) per second. "CPU/req" is the target process's user+system CPU time per answered request (PostgreSQL's is not in it); "machine busy" is the whole machine's CPU use during the phase (all cores = 100%), "of which PostgreSQL" the gateway database's backends.`);
  L.push(`- All targets run at once (idle when not measured). Each phase warms every target up, then runs ${CFG.rounds} round(s) in which every target gets ${(CFG.seconds / CFG.rounds).toFixed(1)} s of the load in turn (order rotated per round); a row's figures merge its slices. Before each phase the script waits (up to ${CFG.quietWaitSeconds} s) for the machine to be under 20% busy. "Background CPU" is the share of the whole machine other processes (not this script, the simulator, the target or the target's PostgreSQL backends) took during the row's slices, time-weighted; above 15% (bold) the row's absolute figures are inflated, though the targets of one phase shared the disturbance.`);
  L.push(`- The gateway's account gets rate limits far above the load (PATCH /admin/accounts/{id}) so that admission control runs without refusing; the default limits (6,000 req/min, 256 concurrent) would refuse this load.`);
  L.push(`- Translated stream: \`${TRANSLATED_MODEL}\` on \`/v1/chat/completions\`, a messages-format offering; the direct baseline is the same request in messages format sent to the simulator's \`/v1/messages\`. Portkey runs the same translation with \`x-portkey-provider: anthropic\`.`);
  L.push(`- Open streams: ${CFG.openStreams} streams of \`${OPEN_STREAM_MODEL}\` opened within about a second; the simulator holds each open (a \`chunk_delay_ms: ${CFG.openStreamChunkDelayMs}\` fault, about ${((MAX_TOKENS + 2) * CFG.openStreamChunkDelayMs / 1000).toFixed(0)} s per stream); RSS is the target process's VmRSS 0.5 s after all ${CFG.openStreams} have delivered their first byte, and the peak of 50 ms samples over the phase.`);
  L.push('');

  L.push('## Non-streaming chat: latency (open loop)', '');
  const lowHdr = `@${CFG.lowRate}/s`;
  const hiHdr = `@${CFG.rate}/s`;
  L.push(`| Target | p50 ${lowHdr} (ms) | p99 ${lowHdr} | added p50 ${lowHdr} | added p99 ${lowHdr} | p50 ${hiHdr} (ms) | p99 ${hiHdr} | added p50 ${hiHdr} | added p99 ${hiHdr} | served ${hiHdr} | background CPU | errors |`);
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const lo = r.latencyLow; const hi = r.latency;
    const add = (x, d) => (r.kind === 'direct' ? '—' : signed(x - d));
    L.push(`| ${r.label} | ${f2(lo.p50)} | ${f2(lo.p99)} | ${add(lo.p50, direct.latencyLow.p50)} | ${add(lo.p99, direct.latencyLow.p99)} | ${f2(hi.p50)} | ${f2(hi.p99)} | ${add(hi.p50, direct.latency.p50)} | ${add(hi.p99, direct.latency.p99)} | ${f0(hi.rps)}/s${hi.overloaded ? ' **overloaded**' : ''} | ${bgCell(lo, hi)} | ${errCell(lo, hi)} |`);
  }
  L.push('', `"Served" is answers per second over the phase; below 95% of the offered rate the target could not keep up and its latency is mostly queueing.`, '');
  L.push(`## Non-streaming chat: throughput (closed loop, ${CFG.concurrency} in flight)`, '');
  L.push(`| Target | req/s | p50 / p99 (ms) | CPU/req of the target (µs) | machine busy | of which PostgreSQL | background CPU | errors | req/s over ${CFG.accounts} accounts (CPU/req, background) |`);
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const t = r.throughput; const m = r.throughputMulti;
    const multi = m ? `${f0(m.rps)} (${f0(m.cpuUsPerRequest)} µs, ${bgCell(m)})${m.errors ? ` ${errCell(m)} errors` : ''}` : '—';
    L.push(`| ${r.label} | ${f0(t.rps)} | ${f2(t.p50)} / ${f2(t.p99)} | ${r.kind === 'direct' ? '—' : f0(t.cpuUsPerRequest)} | ${f0(t.cpu.busy)}% | ${f0(t.cpu.postgres)}% | ${bgCell(t)} | ${errCell(t)} | ${multi} |`);
  }
  L.push('', `The last column is a diagnostic: the same closed loop with the requests spread over ${CFG.accounts} accounts (one key each) instead of one.`);
  for (const r of rows) {
    for (const [key, what] of [['throughput', 'one account'], ['throughputMulti', `${CFG.accounts} accounts`]]) {
      const waits = r[key]?.waits;
      if (!waits?.length) continue;
      L.push('', `PostgreSQL backends of ${r.label} during the closed loop (${what}), sampled every 20 ms: average number of backends per state and statement (idle backends left out; the pool has 10).`, '');
      L.push('| backends | state | waiting on | statement |', '|--:|---|---|---|');
      for (const w of waits.slice(0, 8)) L.push(`| ${w.avg.toFixed(2)} | ${w.state} | ${w.wait} | \`${w.query.replace(/\|/g, '\\|')}\` |`);
    }
  }
  const work = rows.find((r) => r.storeWork)?.storeWork;
  if (work) L.push('', `PostgreSQL work per non-streaming request of the gateway (pg_stat_database over ${work.requests} requests): ${work.transactions.toFixed(2)} transactions, ${work.inserted.toFixed(2)} rows inserted, ${work.updated.toFixed(2)} rows updated, ${work.fetched.toFixed(2)} rows fetched.`);
  L.push('');

  for (const [title, latKey, tputKey] of [['Streaming chat', 'streamLatency', 'streamThroughput'], [`Translated streaming chat (${TRANSLATED_MODEL} on /v1/chat/completions)`, 'translatedLatency', 'translatedThroughput']]) {
    L.push(`## ${title}`, '');
    L.push(`| Target | TTFB p50 @${CFG.streamRate}/s (ms) | TTFB p99 (ms) | added TTFB p50 (ms) | added TTFB p99 (ms) | whole stream p50 / p99 (ms) | served @${CFG.streamRate}/s | throughput x${CFG.concurrency} (streams/s) | TTFB p50 at max (ms) | CPU/stream (µs) | machine busy at max | background CPU | errors |`);
    L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const r of rows) {
      const a = r[latKey]; const t = r[tputKey]; const d = direct[latKey];
      const added = r.kind === 'direct' ? ['—', '—'] : [signed(a.ttfbP50 - d.ttfbP50), signed(a.ttfbP99 - d.ttfbP99)];
      L.push(`| ${r.label}${r.kind === 'direct' && latKey === 'translatedLatency' ? ' (/v1/messages)' : ''} | ${f2(a.ttfbP50)} | ${f2(a.ttfbP99)} | ${added[0]} | ${added[1]} | ${f2(a.p50)} / ${f2(a.p99)} | ${f0(a.rps)}/s${a.overloaded ? ' **overloaded**' : ''} | ${f0(t.rps)} | ${f2(t.ttfbP50)} | ${r.kind === 'direct' ? '—' : f0(t.cpuUsPerRequest)} | ${f0(t.cpu.busy)}% | ${bgCell(a, t)} | ${errCell(a, t)} |`);
    }
    L.push('');
  }

  const withOpen = rows.filter((r) => r.open);
  if (withOpen.length) {
    L.push(`## Resident memory with ${CFG.openStreams} open streams`, '');
    L.push('| Target | RSS at start (MB) | RSS idle after the other phases (MB) | RSS, all open (MB) | peak RSS in phase (MB) | VmHWM since start (MB) | streams open / completed | seconds to open all | TTFB p50 / p99 (ms) | background CPU |');
    L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const r of withOpen) {
      const o = r.open;
      L.push(`| ${r.label} | ${f0(o.rssStartMb)} | ${f0(o.rssBeforeMb)} | ${f0(o.rssAllOpenMb)} | ${f0(o.rssPeakMb)} | ${f0(o.hwmMb)} | ${o.opened} / ${o.ok} of ${o.count} | ${f2(o.secondsToOpenAll)} | ${f2(o.ttfbP50)} / ${f2(o.ttfbP99)} | ${bgCell(o)} |`);
    }
    L.push('', `For scale: a bare \`node\` process is ${f0(baselines.nodeMb)} MB resident here, and ${f0(baselines.tokenizerMb)} MB once it has loaded \`gpt-tokenizer/encoding/o200k_base\` (the gateway's token counter, imported at start): ${f0(baselines.tokenizerMb - baselines.nodeMb)} MB of the gateway's RSS at start is that table.`);
    L.push('');
  }

  L.push('## Targets (gateway with metering on PostgreSQL)', '');
  L.push('| Target | Goal | Measured | Verdict |', '|---|---|---|---|');
  for (const t of targets) L.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.verdict} |`);
  L.push('');
  const why = explain(rows, baselines);
  if (why.length) L.push('Why, from the measurements above:', '', ...why.map((w) => `- ${w}`), '');

  if (profile) {
    L.push('## CPU profile of the gateway (PostgreSQL)', '');
    L.push(`\`node --cpu-prof dist/src/main.js\` on a fresh account under the non-streaming loads (${CFG.seconds} s at ${CFG.lowRate} req/s: p50 ${f2(profile.latency.p50)} ms, p99 ${f2(profile.latency.p99)} ms; then closed loop x${CFG.concurrency} for ${CFG.seconds} s: ${f0(profile.throughput.rps)} req/s; the profiler itself costs some throughput). ${f0(profile.busyMs)} ms of on-CPU samples on the main thread under load (start-up and idle excluded). Profile: \`${profile.file}\` (open in Chrome DevTools; not committed).`, '');
    L.push('Self time by origin:', '');
    L.push('| Origin | self ms | share |', '|---|--:|--:|');
    for (const c of profile.categories) L.push(`| ${c.name} | ${f0(c.ms)} | ${c.share.toFixed(1)}% |`);
    L.push('', 'Top functions by self time:', '');
    L.push('| Function (file:line) | self ms | share |', '|---|--:|--:|');
    for (const f of profile.functions) L.push(`| \`${f.name.replace(/\|/g, '\\|')}\` | ${f0(f.ms)} | ${f.share.toFixed(1)}% |`);
    L.push('');
    if (profile.note) L.push(profile.note, '');
  }
  return L.join('\n');
}

function evaluateTargets(gw, portkeyResult, direct) {
  const out = [];
  if (!gw) return out;
  const verdictBelow = (value, goal, unit) => (value < goal ? `met (${(goal - value).toFixed(2)} ${unit} to spare)` : `**missed by ${(value - goal).toFixed(2)} ${unit}** (${(value / goal).toFixed(1)}x the goal)`);
  for (const [pct, goal] of [['p50', TARGETS.addedP50Ms], ['p99', TARGETS.addedP99Ms]]) {
    const added = gw.latency[pct] - direct.latency[pct];
    const low = gw.latencyLow[pct] - direct.latencyLow[pct];
    const overload = gw.latency.overloaded ? ` — overloaded: served ${gw.latency.rps.toFixed(0)} of ${CFG.rate} req/s, so this is queueing` : '';
    out.push({
      name: `Added latency ${pct} at ${CFG.rate} req/s`, goal: `< ${goal} ms`,
      measured: `${added.toFixed(2)} ms${overload} (at ${CFG.lowRate} req/s: ${low.toFixed(2)} ms)`,
      verdict: verdictBelow(added, goal, 'ms'), met: added < goal,
    });
  }
  if (portkeyResult) {
    for (const [key, what] of [['throughput', 'non-streaming'], ['streamThroughput', 'streaming'], ['translatedThroughput', 'translated streaming']]) {
      const ratio = gw[key].rps / portkeyResult[key].rps;
      const met = ratio >= TARGETS.throughputVsPortkey;
      out.push({
        name: `Throughput vs Portkey, ${what} (x${CFG.concurrency})`, goal: `>= ${TARGETS.throughputVsPortkey}x`,
        measured: `${ratio.toFixed(2)}x (${gw[key].rps.toFixed(0)} vs ${portkeyResult[key].rps.toFixed(0)}/s)${key === 'throughput' && gw.throughputMulti ? `; over ${CFG.accounts} accounts ${(gw.throughputMulti.rps / portkeyResult[key].rps).toFixed(2)}x (${gw.throughputMulti.rps.toFixed(0)}/s)` : ''}`,
        verdict: met ? 'met' : `**missed by ${((TARGETS.throughputVsPortkey - ratio) / TARGETS.throughputVsPortkey * 100).toFixed(0)}%** (needs ${(TARGETS.throughputVsPortkey * portkeyResult[key].rps).toFixed(0)}/s, +${((TARGETS.throughputVsPortkey / ratio - 1) * 100).toFixed(0)}%)`,
        met, primary: key === 'throughput',
      });
    }
  }
  if (gw.open) {
    const rss = Math.max(gw.open.rssAllOpenMb, gw.open.rssPeakMb);
    out.push({
      name: `Resident memory, ${CFG.openStreams} open streams (peak)`, goal: `< ${TARGETS.rssMb} MB`, measured: `${rss.toFixed(0)} MB (${gw.open.rssAllOpenMb.toFixed(0)} MB with all open)`,
      verdict: rss < TARGETS.rssMb ? `met (${(TARGETS.rssMb - rss).toFixed(0)} MB to spare)` : `**missed by ${(rss - TARGETS.rssMb).toFixed(0)} MB**`, met: rss < TARGETS.rssMb,
    });
  }
  return out;
}

const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeString', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString', 'writeUcs2String']);

function profileNote(profile) {
  const cats = profile.categories;
  const share = (name) => cats.find((c) => c.name === name)?.share ?? 0;
  const gwCode = share('gateway code (dist/src)');
  const nodeCore = share('node core (net, http, streams)');
  const gc = share('GC');
  const deps = cats.filter((c) => !['gateway code (dist/src)', 'node core (net, http, streams)', 'GC', 'native', 'V8/native (program)', 'other'].includes(c.name));
  const writes = profile.allFunctions.filter((f) => SOCKET_WRITES.has(f.name)).reduce((a, f) => a + f.share, 0);
  const top = profile.allFunctions.filter((f) => !SOCKET_WRITES.has(f.name) && !f.name.startsWith('(')).slice(0, 6)
    .map((f) => `\`${f.name}\` (${f.share.toFixed(1)}%)`).join(', ');
  return [
    `Summary: ${gwCode.toFixed(0)}% of the samples are the gateway's own code, ${nodeCore.toFixed(0)}% node core JavaScript (sockets, HTTP, streams), ${gc.toFixed(0)}% garbage collection; dependencies: ${deps.map((d) => `${d.name} ${d.share.toFixed(0)}%`).join(', ') || 'none'}.`,
    `Native socket writes (\`writev\`, \`writeBuffer\`, \`writeString\`) hold ${writes.toFixed(0)}% of the samples. V8 samples on wall time: a write that wakes PostgreSQL, the simulator or the client on a machine whose cores are all busy is usually preempted by the process it woke, and the waiting is charged to the write. So that share measures how many round trips a request makes (the ledger's reserve, then a settle transaction of several statements, per request) on a saturated machine rather than the gateway's own CPU; the process CPU per request in the tables above is the cost measure.`,
    `Hottest JavaScript functions besides those: ${top}.`,
  ].join(' ');
}

// ---------------------------------------------------------------------------------------------
// Main

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
  let profile = null;
  let portkeyInfo = null;
  try {
    if (runPostgres) {
      db = await createDatabase();
      progress(`PostgreSQL database ${db.name} created (${db.version})`);
      const gw = await startGateway('gateway (PostgreSQL)', simUrl, { databaseUrl: db.url });
      targets.push({ ...gw, id: 'gw-pg', store: 'postgres', label: 'Gateway, PostgreSQL', database: db.name });
      progress(`gateway on PostgreSQL at ${gw.url} (pid ${gw.pid}, ${gw.rssStartMb.toFixed(0)} MB RSS)`);
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
      if (t.kind === 'direct') continue;
      measured.get(t.id).open = await measureOpenStreams(t, simInfo);
    }
    const gwPgTarget = targets.find((t) => t.id === 'gw-pg');
    if (gwPgTarget) {
      measured.get('gw-pg').storeWork = await storeWorkPerRequest(gwPgTarget).catch(() => null);
      const w = measured.get('gw-pg').storeWork;
      if (w) progress(`PostgreSQL work per request: ${w.transactions.toFixed(2)} transactions, ${w.inserted.toFixed(2)} rows inserted, ${w.updated.toFixed(2)} updated, ${w.fetched.toFixed(2)} fetched`);
    }
    for (const t of targets) if (t.proc) await t.proc.stop();
    const results = targets.map((t) => measured.get(t.id));
    const baselines = { ...memoryBaselines(), commitMs: db ? await commitLatencyMs(db.url).catch(() => NaN) : NaN };
    progress(`one PostgreSQL commit (median round trip): ${f2(baselines.commitMs)} ms`);
    progress(`RSS of a bare node: ${baselines.nodeMb.toFixed(0)} MB; with the o200k tokenizer loaded: ${baselines.tokenizerMb.toFixed(0)} MB`);

    const direct = results.find((r) => r.kind === 'direct');
    const gwPg = results.find((r) => r.kind === 'gateway' && r.store === 'postgres');
    const verdicts = evaluateTargets(gwPg, results.find((r) => r.kind === 'portkey'), direct);
    for (const t of verdicts) progress(`target ${t.name}: ${t.measured} (goal ${t.goal}): ${t.verdict.replace(/\*/g, '')}`);
    const missed = verdicts.some((t) => !t.met);
    if (db && (CFG.profile === '1' || (CFG.profile === 'auto' && missed))) {
      try {
        profile = await profileGateway(simUrl, { databaseUrl: db.url });
        profile.note = profileNote(profile);
      } catch (error) {
        progress(`profile failed: ${error.message}`);
      }
    }
    const markdown = report({
      machine, results, pgVersion: db?.version ?? null, portkey: portkeyInfo, profile, targets: verdicts, command, startedAt, baselines,
      durationS: (performance.now() - t0) / 1000,
    });
    writeFileSync(CFG.output, `${markdown}\n`);
    progress(`wrote ${relative(process.cwd(), CFG.output) || CFG.output}`);
  } finally {
    await sim.stop();
    for (const child of children) child.kill('SIGKILL');
    if (db) {
      await adminSql(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`).then(
        () => progress(`PostgreSQL database ${db.name} dropped`),
        (error) => progress(`could not drop ${db.name}: ${error.message}`),
      );
    }
  }
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  killChildren();
  process.exit(1);
});
