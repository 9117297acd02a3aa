/** CPU and memory meters (Linux /proc), and the wait for a quiet machine. */

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CFG, CLK_TCK, ROOT, progress } from './config.mjs';
import { adminSql } from './db.mjs';

/** Resident set and its high-water mark of a process, in MB (Linux /proc). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch { return { rssMb: NaN, hwmMb: NaN }; }
}

/**
 * Resident MB of malloc's main heap (the `[heap]` mapping: the C library's main arena, where Node
 * allocates each socket read's bytes), apart from V8's heap and the node binary (Linux /proc smaps).
 */
export function mallocHeapMbOf(pid) {
  try {
    let kb = 0;
    let inHeap = false;
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.trimEnd().endsWith(' [heap]');
      else if (inHeap && line.startsWith('Rss:')) kb += Number(line.split(/\s+/)[1]);
    }
    return kb / 1024;
  } catch { return NaN; }
}

/** User and system CPU seconds a process has used, apart (Linux /proc). */
export function cpuSplitOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / CLK_TCK, system: Number(fields[12]) / CLK_TCK };
  } catch { return { user: NaN, system: NaN }; }
}

/** User + system CPU seconds a process has used (Linux /proc). */
export function cpuSecondsOf(pid) {
  const { user, system } = cpuSplitOf(pid);
  return user + system;
}

/** Busy and total jiffies of the whole machine (Linux /proc/stat). */
export function machineCpu() {
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
export async function cpuMeter(pids, database) {
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
export async function waitForQuiet(maxSeconds = CFG.quietWaitSeconds) {
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

/**
 * RSS of a bare node process; of one that has counted a token with the gateway's tokenizer (its
 * compact o200k table, src/bpe.ts); of one that has loaded gpt-tokenizer's own o200k module instead
 * (what the gateway loaded at start before); and of one running the embedded store (PGlite in memory,
 * migrated), the part of the embedded gateway's RSS that is its store.
 */
export function memoryBaselines() {
  const rssOf = (code) => {
    try {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', `${code}; console.log(process.memoryUsage().rss)`], { cwd: ROOT, encoding: 'utf8' });
      return Number(out.trim().split('\n').at(-1)) / 2 ** 20;
    } catch { return NaN; }
  };
  return {
    nodeMb: rssOf(''),
    tokenizerMb: rssOf("const t = await import('./dist/src/tokenize.js'); t.countTextTokens('hello world')"),
    gptTokenizerMb: rssOf("await import('gpt-tokenizer/encoding/o200k_base')"),
    pgliteMb: rssOf("const { openDb } = await import('./dist/src/store/db.js'); globalThis.db = await openDb({ dataDir: ':memory:' })"),
  };
}
