/** The measured phases: every target in rotating rounds, the open streams, the store's work per request. */

import { setTimeout as sleep } from 'node:timers/promises';
import { CFG, PHASES, progress } from './config.mjs';
import { cpuMeter, cpuSecondsOf, waitForQuiet } from './cpu.mjs';
import { adminSql, sampleActivity, summarizeActivity } from './db.mjs';
import { aggregate, closedLoop, newPool, openLoop, openStreams, scenarios, send, simControl } from './load.mjs';

const fmtErr = (r) => (r.errors ? ` ERRORS ${r.errors}/${r.sent} (${r.firstError})` : '');
const ms = (v) => (Number.isNaN(v) ? 'n/a' : `${v.toFixed(2)} ms`);

function phaseLine(phase, r) {
  const cpu = `[machine ${r.cpu.busy.toFixed(0)}% busy, background ${r.cpu.background.toFixed(0)}%${r.cpu.backgroundMax > r.cpu.background + 5 ? ` (max ${r.cpu.backgroundMax.toFixed(0)}%)` : ''}]`;
  const load = phase.rate === undefined
    ? `${r.rps.toFixed(0)}/s`
    : `served ${r.rps.toFixed(0)}/s${r.overloaded ? ` OVERLOADED${r.overloadedAfter !== null ? ` (stopped after ${r.overloadedAfter.toFixed(1)}s)` : ''}` : ''}`;
  const lat = phase.scenario.startsWith('chat') ? `p50 ${ms(r.p50)} p99 ${ms(r.p99)}` : `TTFB p50 ${ms(r.ttfbP50)} p99 ${ms(r.ttfbP99)}, whole stream p50 ${ms(r.p50)}`;
  return `${load}, ${lat} ${cpu}${fmtErr(r)}`;
}

/**
 * Runs every phase against every target: after a warm-up of each, CFG.rounds rounds each give every
 * target (in an order rotated per round) CFG.seconds / CFG.rounds of the load, so that a burst of
 * load from other processes falls on all targets alike.
 */
export async function measureAll(targets, sim) {
  const out = new Map(targets.map((t) => [t.id, { label: t.label, kind: t.kind, store: t.store, baseline: t.baseline ?? false, variant: t.variant ?? null }]));
  const pools = new Map(targets.map((t) => [t.id, { open: newPool(t.url, 256), closed: newPool(t.url, CFG.concurrency) }]));
  const sliceSeconds = CFG.seconds / CFG.rounds;
  const run = (t, phase, seconds) => {
    const scenario = scenarios(t)[phase.scenario];
    const { open, closed } = pools.get(t.id);
    return phase.rate === undefined ? closedLoop(closed, scenario, CFG.concurrency, seconds) : openLoop(open, scenario, phase.rate, seconds);
  };
  for (const phase of PHASES) {
    const phaseTargets = targets.filter((t) => (!phase.only || t.kind === phase.only) && t.kind !== phase.skip && (!t.baseline || phase.baseline));
    if (phaseTargets.length === 0) continue;
    await waitForQuiet();
    progress(`phase: ${phase.title}: warm-up, then ${CFG.rounds} x ${sliceSeconds.toFixed(1)}s per target`);
    for (const t of phaseTargets) await warmUp((seconds) => run(t, phase, seconds), phase, t.label);
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

/**
 * Warms a target up for a phase: an open loop for CFG.warmupSeconds; a closed loop in 1 s slices until
 * two in a row serve within 5% of each other (the JIT and the ledger's batching have settled), at
 * least CFG.warmupSeconds and at most CFG.warmupMaxSeconds.
 */
async function warmUp(runFor, phase, label) {
  if (phase.rate !== undefined) { await runFor(CFG.warmupSeconds); return; }
  const served = (r) => r.results.filter((x) => x.ok).length / r.took;
  let last = served(await runFor(1));
  for (let spent = 1; spent < CFG.warmupMaxSeconds; spent++) {
    const now = served(await runFor(1));
    if (spent + 1 >= CFG.warmupSeconds && Math.abs(now - last) <= 0.05 * Math.max(now, last)) return;
    last = now;
  }
  progress(`${label}: ${phase.title}: still changing after a ${CFG.warmupMaxSeconds}s warm-up (last ${last.toFixed(0)}/s)`);
}

/** The open-streams phase of one target. */
export async function measureOpenStreams(target, sim) {
  await waitForQuiet();
  await simControl(sim.url, 'POST', '/__sim/reset');
  const meter = await cpuMeter([process.pid, sim.pid, target.pid], target.database);
  const r = await openStreams(target, sim.url, CFG.openStreams);
  r.cpu = await meter();
  r.cpu.backgroundMax = r.cpu.background;
  progress(`${target.label}: ${CFG.openStreams} open streams: ${r.opened}/${r.count} open after ${r.secondsToOpenAll.toFixed(1)}s, RSS ${r.rssStartMb.toFixed(0)} MB at start, ${r.rssBeforeMb.toFixed(0)} MB before, ${r.rssAllOpenMb.toFixed(0)} MB all open (peak ${r.rssPeakMb.toFixed(0)} MB) [background ${r.cpu.background.toFixed(0)}%]${r.errors ? ` ERRORS ${r.errors} (${r.firstError})` : ''}`);
  return r;
}

/** PostgreSQL work per non-streaming request: transactions and rows, from pg_stat_database around `n` requests. */
export async function storeWorkPerRequest(target, n = 200) {
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
