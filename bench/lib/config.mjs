/** Settings of the benchmark (BENCH_* overrides, --quick), its constants and its progress log. */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/** The bench/ directory. */
export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The repository root (the bench runs dist/ from there). */
export const ROOT = resolve(BENCH_DIR, '..');
/** The command-line arguments of the run. */
export const ARGS = process.argv.slice(2);
/** True with --quick: shorter phases. */
export const QUICK = ARGS.includes('--quick');

/** A non-negative number from the environment, else the full-run or --quick default. */
function setting(name, full, quick = full) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return QUICK ? quick : full;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return value;
}

/** The run's settings: BENCH_* environment overrides, else the defaults. */
export const CFG = {
  simLatencyMs: setting('BENCH_SIM_LATENCY_MS', 20),
  rate: setting('BENCH_RATE', 500),
  lowRate: setting('BENCH_LOW_RATE', 100),
  streamRate: setting('BENCH_STREAM_RATE', 500),
  seconds: setting('BENCH_SECONDS', 10, 3),
  rounds: Math.max(1, Math.round(setting('BENCH_ROUNDS', 2, 1))),
  warmupSeconds: setting('BENCH_WARMUP_SECONDS', 2, 1),
  // A closed loop warms up in 1 s slices until two in a row agree within 5% (or this many seconds):
  // the first slice after a fixed 2 s warm-up served a third less than the later ones (2026-12-02),
  // and which target a phase measured first decided the ranking.
  warmupMaxSeconds: setting('BENCH_WARMUP_MAX_SECONDS', 15, 1),
  // Closed loops run enough requests at once to be bound by CPU, not by the upstream's latency: 64 in
  // flight against a 20 ms upstream cap any target near 64 / 20 ms = 3,200/s, which measured the
  // latency under load rather than how much a target can serve (bench/RESULTS.md of 2026-11-24).
  concurrency: setting('BENCH_CONCURRENCY', 256),
  accounts: Math.max(2, Math.round(setting('BENCH_ACCOUNTS', 16))),
  openStreams: setting('BENCH_OPEN_STREAMS', 1000, 1000),
  openStreamChunkDelayMs: 300,
  quietWaitSeconds: setting('BENCH_QUIET_WAIT_SECONDS', 10),
  profile: (process.env.BENCH_PROFILE ?? 'auto').trim() || 'auto',
  /** The per-stage timing run (a gateway with GATEWAY_STAGE_TIMINGS=1): 1 (default) or 0. */
  stages: (process.env.BENCH_STAGES ?? '1').trim() !== '0',
  adminUrl: process.env.BENCH_DATABASE_ADMIN_URL ?? process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://127.0.0.1:5432/postgres',
  portkeyVersion: process.env.BENCH_PORTKEY_VERSION ?? '1.15.2',
  output: resolve(process.env.BENCH_OUTPUT ?? join(BENCH_DIR, 'RESULTS.md')),
  /**
   * A commit measured beside the current build on the chat phases (its own PostgreSQL database): by
   * default the last one before the generalised engine of issue 9 (2a26eab), so that the run shows what
   * the engine costs chat. Empty: no such target.
   */
  baselineRef: (process.env.BENCH_BASELINE_REF ?? '93c8a3d').trim(),
};
/**
 * The goals the gateway's figures (metering on PostgreSQL) are judged against (issues 8 and 30): added
 * p50 at the low rate within `nearFloorMs` of the floor proxy's, added p50 and p99 below Portkey's at
 * both rates, throughput at least `throughputVsPortkey` x Portkey's and `throughputVsFloor` x the floor
 * proxy's, resident memory with the open streams (after the load phases) within `rssOverFloorMb` of the
 * floor proxy's in the same run; non-streaming and streaming chat.
 */
export const TARGETS = { nearFloorMs: 1, throughputVsPortkey: 2, throughputVsFloor: 0.7, rssOverFloorMb: 30 };
/** The admin token of the gateways this run starts. */
export const ADMIN_TOKEN = `bench-${randomBytes(8).toString('hex')}`;
/** The model of the non-streaming and streaming chat requests. */
export const CHAT_MODEL = 'gpt-4o-mini';
/** The messages-format model requested on /v1/chat/completions (translated stream). */
export const TRANSLATED_MODEL = 'claude-haiku-4-5';
/** The model of the open-streams phase (the simulator holds its streams open). */
export const OPEN_STREAM_MODEL = 'gpt-4o';
/** max_tokens of every request: the benchmark prompts' natural replies are longer, so every answer is cut at it. */
export const MAX_TOKENS = 24;
/** Clock ticks per second of /proc CPU times. */
export const CLK_TCK = (() => { try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; } })();

/** When the run started (performance.now()). */
export const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s`;
/** Prints a progress line with the seconds since the start. */
export const progress = (message) => process.stdout.write(`[bench ${elapsed()}] ${message}\n`);

/**
 * The measured phases, in order. Open-loop phases have a rate; closed-loop ones run CFG.concurrency in
 * flight. `only`: the one kind of target the phase runs on; `skip`: a kind it leaves out; `baseline`:
 * the phase also runs on the baseline commit's gateway (CFG.baselineRef).
 */
export const PHASES = [
  { key: 'latencyLow', scenario: 'chat', rate: CFG.lowRate, title: `non-streaming at ${CFG.lowRate} req/s`, baseline: true },
  { key: 'latency', scenario: 'chat', rate: CFG.rate, title: `non-streaming at ${CFG.rate} req/s`, baseline: true },
  { key: 'throughput', scenario: 'chat', title: `non-streaming closed loop x${CFG.concurrency}`, baseline: true },
  // Diagnostic: the same load spread over CFG.accounts accounts, to show what one account's balance row costs.
  { key: 'throughputMulti', scenario: 'chatMulti', title: `non-streaming closed loop x${CFG.concurrency} over ${CFG.accounts} accounts`, only: 'gateway' },
  { key: 'streamLatencyLow', scenario: 'stream', rate: CFG.lowRate, title: `streaming at ${CFG.lowRate}/s`, baseline: true },
  { key: 'streamLatency', scenario: 'stream', rate: CFG.streamRate, title: `streaming at ${CFG.streamRate}/s`, baseline: true },
  { key: 'streamThroughput', scenario: 'stream', title: `streaming closed loop x${CFG.concurrency}`, baseline: true },
  // The floor proxy translates nothing: it has no translated row.
  { key: 'translatedLatency', scenario: 'translated', rate: CFG.streamRate, title: `translated streaming at ${CFG.streamRate}/s`, skip: 'floor', baseline: true },
  { key: 'translatedThroughput', scenario: 'translated', title: `translated streaming closed loop x${CFG.concurrency}`, skip: 'floor', baseline: true },
  // Embeddings (issue 9): a native route on the generic engine, metered as a quantity of input tokens.
  { key: 'embeddingsLatency', scenario: 'embeddings', rate: CFG.lowRate, title: `embeddings at ${CFG.lowRate} req/s` },
  { key: 'embeddingsThroughput', scenario: 'embeddings', title: `embeddings closed loop x${CFG.concurrency}` },
];
