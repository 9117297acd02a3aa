/** The markdown report of a run, the reasons behind its figures, and the verdicts against TARGETS. */

import os from 'node:os';
import { CFG, CHAT_MODEL, MAX_TOKENS, OPEN_STREAM_MODEL, PHASES, ROOT, TARGETS, TRANSLATED_MODEL } from './config.mjs';
import { startFlags } from './processes.mjs';

/** A number with two decimals, or n/a. */
export const f2 = (v) => (v === undefined || v === null || Number.isNaN(v) ? 'n/a' : v.toFixed(2));
/** A number with no decimals, or n/a. */
export const f0 = (v) => (v === undefined || v === null || Number.isNaN(v) ? 'n/a' : v.toFixed(0));
/** A number with two decimals and its sign, or n/a. */
export const signed = (v) => (v === undefined || Number.isNaN(v) ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
/** A margin with its unit: ms with two decimals, or µs when that would round it to 0.00 (a miss by 0.4 µs is still a miss). */
const msFine = (v) => (Math.abs(v) > 0 && Math.abs(v) < 0.005 ? `${(v * 1000).toFixed(1)} µs` : `${v.toFixed(2)} ms`);
/** The errors cell of a row: 0, or errors/sent. */
export const errCell = (...rs) => {
  const errors = rs.filter(Boolean).reduce((a, r) => a + (r.errors ?? 0), 0);
  const sent = rs.filter(Boolean).reduce((a, r) => a + (r.sent ?? r.count ?? 0), 0);
  return errors === 0 ? '0' : `${errors}/${sent}`;
};
/** The most CPU other processes took during any of the phases of a row, in % of the machine. */
export const bgCell = (...rs) => {
  const v = Math.max(...rs.filter(Boolean).map((r) => r.cpu?.background ?? 0));
  return v > 15 ? `**${v.toFixed(0)}%**` : `${v.toFixed(0)}%`;
};

/** PostgreSQL's CPU per answered request of a phase in µs, from its backends' share of the machine (issue 30). */
export const pgUsPerRequest = (r) => (r && r.rps > 0 ? ((r.cpu.postgres / 100) * os.cpus().length / r.rps) * 1e6 : NaN);
/** The PostgreSQL cell of a row: its share of the machine and its CPU per request; 0% when it has no store of its own. */
const pgCell = (r) => (r.cpu.postgres > 0 ? `${f0(r.cpu.postgres)}% (${f0(pgUsPerRequest(r))})` : '0%');

/** The target's figure `key` of phase `phase` minus the direct one (the added latency), in ms. */
const addedOf = (r, direct, phase, key) => (r?.[phase] && direct?.[phase] ? r[phase][key] - direct[phase][key] : NaN);

/** The rows of a run by role. */
function roles(rows) {
  return {
    direct: rows.find((r) => r.kind === 'direct'),
    floor: rows.find((r) => r.kind === 'floor'),
    gw: rows.find((r) => r.kind === 'gateway' && r.store === 'postgres' && !r.baseline),
    base: rows.find((r) => r.baseline && !r.variant),
    gwLite: rows.find((r) => r.kind === 'gateway' && r.store === 'pglite'),
    pk: rows.find((r) => r.kind === 'portkey'),
  };
}

/**
 * The current gateway against the baseline commit's (CFG.baselineRef), same run, same store, chat
 * phases only: what the changes since that commit cost chat. The noise is each row's spread between its
 * rounds (lowest to highest slice).
 */
function baselineSection(rows) {
  const { gw, base } = roles(rows);
  if (!gw || !base) return [];
  return comparison(rows, base, `## This build against ${base.label} (BENCH_BASELINE_REF)`, 'baseline');
}

/** Each configuration variant (bench/lib/variants.mjs) against the default configuration, same run. */
function variantSections(rows) {
  const { gw } = roles(rows);
  if (!gw) return [];
  return rows.filter((r) => r.variant).flatMap((v) => comparison(rows, v, `## The default configuration against ${v.label}`, 'variant'));
}

/** One comparison table: this build's default gateway on PostgreSQL against `other`, chat phases. */
function comparison(rows, other, title, name) {
  const { gw, direct } = roles(rows);
  const base = other;
  const L = [title, ''];
  L.push(`Both on PostgreSQL (each its own database), measured in the same rounds. Throughput: the closed loops; the spread is each row's lowest to highest round. Added latency: p50 at ${CFG.lowRate}/s over the direct call.`, '');
  L.push(`| Phase | this build | ${name} | difference | spread between rounds (this build; ${name}) | CPU/req this build / ${name} (µs) |`, '|---|--:|--:|--:|--:|--:|');
  const spread = (r) => (r.sliceRps?.length > 1 ? `${f0(Math.min(...r.sliceRps))}-${f0(Math.max(...r.sliceRps))}` : '—');
  for (const [key, what] of [['throughput', 'non-streaming, req/s'], ['streamThroughput', 'streaming, streams/s'], ['translatedThroughput', 'translated streaming, streams/s']]) {
    const g = gw[key]; const b = base[key];
    if (!g || !b) continue;
    L.push(`| ${what} (x${CFG.concurrency}) | ${f0(g.rps)} | ${f0(b.rps)} | ${((g.rps / b.rps - 1) * 100).toFixed(1)}% | ${spread(g)}; ${spread(b)} | ${f0(g.cpuUsPerRequest)} / ${f0(b.cpuUsPerRequest)} |`);
  }
  // At a fixed rate every target serves the same requests: the CPU per request there is what each
  // configuration costs, without a closed loop's batching (answers released together, issue 30).
  for (const [key, what] of [['latency', `non-streaming at ${CFG.rate}/s (open loop), CPU/req (µs)`], ['streamLatency', `streaming at ${CFG.streamRate}/s (open loop), CPU/stream (µs)`]]) {
    const g = gw[key]?.cpuUsPerRequest; const b = base[key]?.cpuUsPerRequest;
    if (!Number.isFinite(g) || !Number.isFinite(b)) continue;
    L.push(`| ${what} | ${f0(g)} | ${f0(b)} | ${((g / b - 1) * 100).toFixed(1)}% | — | — |`);
  }
  for (const [key, what, k] of [['latencyLow', 'non-streaming, added p50 (ms)', 'p50'], ['streamLatencyLow', 'streaming, added last-byte p50 (ms)', 'p50']]) {
    if (!gw[key] || !base[key]) continue;
    const g = addedOf(gw, direct, key, k); const b = addedOf(base, direct, key, k);
    L.push(`| ${what} @${CFG.lowRate}/s | ${signed(g)} | ${signed(b)} | ${signed(g - b)} ms | — | — |`);
  }
  L.push('');
  return L;
}

/** The two ledger statements' round trips in ms, inside the gateway and from the bare client, p50s (null when not measured). */
function ledgerPair(load) {
  const stmt = (name) => load?.statements?.find((r) => r.statement === name);
  const reserve = stmt('ledger_reserve_one');
  const settle = stmt('ledger_settle_one');
  const alone = load?.ledgerAlone;
  return reserve && settle && alone ? { reserve, settle, alone } : null;
}

/**
 * The ledger's statements inside the stage-timed gateway (gateway_store_statement_duration_seconds)
 * beside the same statements from a bare client in slices between the gateway's: same machine state.
 */
function statementTable(load) {
  const pair = ledgerPair(load);
  if (!pair) return [];
  const { reserve, settle, alone } = pair;
  const cell = (x) => `${f2(x.p50Ms)} / ${f2(x.meanMs)}`;
  return [
    `The ledger's statements at ${load.rate} req/s (non-streaming), each timed from the call to its rows: inside the gateway (\`gateway_store_statement_duration_seconds{statement}\`, with the pool's checkout), and sent by a bare client (node-postgres, the gateway's own prepared statements and session settings, none of its code: the reserve, then ${CFG.simLatencyMs} ms later the durable settle of one usage row) in slices between the gateway's. Other statements the gateway ran (batches of several, when requests overlapped): ${load.statements.filter((r) => r !== reserve && r !== settle).map((r) => `${r.statement} ${r.count}x`).join(', ') || 'none'}.`, '',
    '| Statement | gateway: p50 / mean (ms) | bare client: p50 / mean (ms) | requests (gateway / bare) |', '|---|--:|--:|--:|',
    `| reserve (ledger_reserve_one, no WAL flush wait) | ${cell(reserve)} | ${cell(alone.reserve)} | ${reserve.count} / ${alone.reserve.n} |`,
    `| settle (ledger_settle_one, durable) | ${cell(settle)} | ${cell(alone.settle)} | ${settle.count} / ${alone.settle.n} |`,
    '',
  ];
}

/** "Where each millisecond goes": the stage table of one load of the stage-timing run, and its reading. */
function stageSection(stages, floor, direct) {
  const L = [];
  const loads = stages.loads;
  L.push(`## Where each millisecond goes (per-stage timings, gateway on PostgreSQL)`, '');
  L.push(`A separate gateway on the same PostgreSQL, started with \`GATEWAY_STAGE_TIMINGS=1\`: each pipeline stage is timed with \`performance.now()\` into the histogram \`gateway_stage_duration_seconds{stage}\` (GET /metrics), scraped before and after each slice of load. The flag is read once at start, when the routes' pipelines are compiled (each stage handler wrapped, or not): the gateways measured above run without it, so the timing costs them nothing. Loads as in the main run (open loop, ${stages.seconds} s each, in ${CFG.rounds} slice(s) alternating with the client calling the simulator directly at the same rate). Means per request; p50 and p99 are read from the histogram's buckets (interpolated).`, '');
  const head = loads.map((l) => `${l.title}: mean / p50 / p99 (ms)`).join(' | ');
  L.push(`| Stage | What it covers | ${head} |`, `|---|---|${loads.map(() => '--:').join('|')}|`);
  for (const { stage, what } of loads[0].rows) {
    L.push(`| ${stage} | ${what} | ${loads.map((l) => { const r = l.rows.find((x) => x.stage === stage); return r ? `${f2(r.meanMs)} / ${f2(r.p50Ms)} / ${f2(r.p99Ms)}` : '—'; }).join(' | ')} |`);
  }
  const own = (l) => l.rows.filter((r) => r.stage !== 'upstream').reduce((a, r) => a + (Number.isNaN(r.meanMs) ? 0 : r.meanMs), 0);
  const up = (l) => l.rows.find((r) => r.stage === 'upstream').meanMs;
  L.push(`| **sum of the stages but upstream** | the gateway's own work on the request's path | ${loads.map((l) => `**${f2(own(l))}**`).join(' | ')} |`);
  L.push(`| pipeline (gateway_request_duration_seconds) | from the first stage to the end of the request's bookkeeping | ${loads.map((l) => f2(l.pipelineMeanMs)).join(' | ')} |`);
  L.push(`| client: gateway / direct (mean) | what the load generator measured, to the last byte | ${loads.map((l) => `${f2(l.client.mean)} / ${f2(l.direct.mean)}`).join(' | ')} |`);
  L.push('');
  L.push(...statementTable(loads.find((l) => l.key === 'chatLow')));
  L.push(`Reading the means (added latency = the client's mean through the gateway minus its mean calling the simulator directly):`, '');
  for (const l of loads) {
    const added = l.client.mean - l.direct.mean;
    const upstreamExtra = up(l) - l.direct.mean;
    const rest = added - own(l) - upstreamExtra;
    const byStage = l.rows.filter((r) => r.stage !== 'upstream' && r.meanMs >= 0.005).sort((a, b) => b.meanMs - a.meanMs).map((r) => `${r.stage} ${f2(r.meanMs)}`).join(', ');
    const floorKey = l.key === 'chatLow' ? 'latencyLow' : l.key === 'chat' ? 'latency' : 'streamLatencyLow';
    const floorAdded = floor?.[floorKey] && direct?.[floorKey] ? floor[floorKey].mean - direct[floorKey].mean : NaN;
    L.push(`- ${l.title}: the gateway added **${f2(added)} ms**: ${f2(own(l))} ms in its own stages (${byStage}); ${f2(upstreamExtra)} ms more in the upstream stage than the whole direct call (the gateway's undici pool against the load generator's, on a busier machine); and ${f2(rest)} ms outside the stages: the client-to-gateway hop (sockets, HTTP parsing and writing, the event loop's queue), which the floor proxy, all hop and nothing else, measures at ${f2(floorAdded)} ms (mean, main run).`);
  }
  L.push('');
  return L;
}

/**
 * A target's malloc heap at start and idle after the load phases, as a parenthesis for the memory
 * paragraph; nothing when it was not measured.
 */
function mallocHeapNote(o) {
  return Number.isFinite(o.mallocStartMb) && Number.isFinite(o.mallocBeforeMb) ? ` (malloc's heap: ${f0(o.mallocStartMb)} MB at start, ${f0(o.mallocBeforeMb)} MB then)` : '';
}

/**
 * What the two ledger statements cost from a bare client and, in the same slices, inside the gateway,
 * against admission's and settle's p50s (nothing when the stage run did not measure them).
 */
function aloneNote(chatLow) {
  const pair = ledgerPair(chatLow);
  if (!pair) return '';
  const { reserve, settle, alone } = pair;
  const both = alone.reserve.p50Ms + alone.settle.p50Ms;
  const stage = (name) => chatLow.rows.find((r) => r.stage === name);
  const admission = stage('admission');
  return ` The two ledger statements alone, sent at ${alone.rate}/s by a bare client (the gateway's own prepared reserve, then ${CFG.simLatencyMs} ms later its durable settle of one usage row; none of the gateway's code, in slices between the per-stage gateway's), take ${f2(alone.reserve.p50Ms)} ms and ${f2(alone.settle.p50Ms)} ms at the median: ${f2(both)} ms on every metered request's path before the gateway does anything, ${both > 1 ? 'more than' : 'within'} the 1 ms the target leaves for all of it.` +
    ` Inside the gateway, in the same slices, the same statements took ${f2(reserve.p50Ms)} and ${f2(settle.p50Ms)} ms at the median (the table under the stages): the round trips cost the gateway about what they cost a bare client. What admission and settle add to them at the median (${f2(admission.p50Ms - reserve.p50Ms)} and ${f2(stage('settle').p50Ms - settle.p50Ms)} ms) is the gateway's own: the limiter, the estimate and the quote; the bill, its rows and the answer's headers; the group commit's turn of the event loop.` +
    (admission.meanMs > admission.p50Ms ? ` (The means above run higher than these medians, admission ${f2(admission.meanMs)} against ${f2(admission.p50Ms)} ms: a few slow round trips weigh on them.)` : '');
}

/** Data-driven reasons for the gateway's figures (PostgreSQL row against the floor's, Portkey's and the direct one). */
export function explain(rows, baselines, stages) {
  const { gw, pk, floor, direct, gwLite } = roles(rows);
  const out = [];
  if (!gw) return out;
  const cores = os.cpus().length;
  const waits = gw.throughput.waits ?? [];
  if (waits.length) {
    const sum = (pred) => waits.filter(pred).reduce((a, w) => a + w.avg, 0);
    const work = gw.storeWork;
    out.push(`The store: money moves in batches (the reserves, settles and releases that arrived while the previous batch was in flight go together: one round trip, one commit, each account row locked once; a batch of one, the usual case at low rates, is one prepared statement, a larger one a \`ledger_batch\` call)` +
      (work ? `, ${work.transactions.toFixed(2)} transactions per request at 8 in flight` : '') +
      `. A batch without a settle (reserves and releases) commits without waiting for its WAL flush (on connections whose sessions have \`synchronous_commit = off\`; migration 006 explains why that is safe); a batch with a settle waits, so an answer completes only once its charge is durable` +
      (Number.isFinite(baselines?.commitMs) ? `: one commit takes ${f2(baselines.commitMs)} ms here with the flush, ${f2(baselines.commitAsyncMs)} ms without (median round trip of a one-row insert, one client)` : '') +
      `. During the one-account closed loop, of the pool's 10 backends on average ${sum((w) => w.wait === 'on CPU').toFixed(2)} were running, ${sum((w) => w.wait.startsWith('Lock:')).toFixed(2)} waiting on a row lock and ${sum((w) => /WAL(Sync|Write)/.test(w.wait)).toFixed(2)} flushing WAL.`);
  }
  if (pk && floor) {
    // A closed loop of N in flight serves at most N / latency: with the upstream's fixed latency that is a
    // ceiling no proxy passes (the direct row is the ceiling measured). Below 90% busy the loop is bound by it.
    const ceiling = direct?.throughput ? CFG.concurrency / (direct.throughput.p50 / 1000) : NaN;
    const cpuBound = (r) => r.cpu.busy >= 90;
    // A Node process serves on one JavaScript thread: at about a whole core of its own, it is bound by it.
    const threadShare = (r) => (r.rps * r.cpuUsPerRequest) / 1e6;
    const threadBound = (r) => Number.isFinite(threadShare(r)) && threadShare(r) >= 0.75;
    if (threadBound(gw.throughput)) {
      out.push(`Throughput is bound by the gateway's one JavaScript thread: in the non-streaming closed loop its process used ${f0(100 * threadShare(gw.throughput))}% of a core (${f0(gw.throughput.rps)} req/s at ${f0(gw.throughput.cpuUsPerRequest)} µs each; the whole machine was ${f0(gw.throughput.cpu.busy)}% busy). So its rate is about one core divided by its CPU per request: ${TARGETS.throughputVsFloor * 100}% of the floor proxy's ${f0(floor.throughput.rps)}/s would need at most ${f0(1e6 / (TARGETS.throughputVsFloor * floor.throughput.rps))} µs per request, against the floor's own ${f0(floor.throughput.cpuUsPerRequest)} µs for a hop with nothing else on it; Portkey, bound the same way, spends ${f0(pk.throughput.cpuUsPerRequest)} µs.`);
    }
    // The machine's CPU per request under the floor's closed loop (every process: load generator,
    // simulator, proxy), and what the gateway's PostgreSQL backends add on the same cores: even a gateway
    // process no dearer than the floor proxy would serve at most floor / (floor + store) of its rate.
    const machineUs = (r) => ((r.cpu.busy / 100) * cores / r.rps) * 1e6;
    const storeBound = machineUs(floor.throughput) / (machineUs(floor.throughput) + pgUsPerRequest(gw.throughput));
    if (Number.isFinite(storeBound)) {
      out.push(`What the store alone leaves: under the floor proxy's closed loop the machine spent ${f0(machineUs(floor.throughput))} µs of CPU per request (load generator, simulator and proxy together, ${f0(floor.throughput.cpu.busy)}% busy); the gateway's PostgreSQL backends spent about ${f0(pgUsPerRequest(gw.throughput))} µs per request on the same ${cores} cores (with credit grants, issue 30: the flusher's batched posts, usage rows with their indexes and foreign keys, and the grant and account rows). So a gateway whose own process cost no more than the floor proxy's would still serve at most ${f0(100 * storeBound)}% of the floor's rate on this machine, against the ${f0(100 * TARGETS.throughputVsFloor)}% asked; every microsecond the gateway spends above the floor's ${f0(floor.throughput.cpuUsPerRequest)} µs comes off that.`);
    }
    out.push(`Throughput: CPU per request (the process alone) is ${f0(gw.throughput.cpuUsPerRequest)} µs for the gateway per non-streaming request, plus about ${f0(pgUsPerRequest(gw.throughput))} µs in its PostgreSQL backends (${f0(gw.throughput.cpu.postgres)}% of the machine); ${f0(floor.throughput.cpuUsPerRequest)} µs for the floor proxy; ${f0(pk.throughput.cpuUsPerRequest)} µs for Portkey. Streaming: ${f0(gw.streamThroughput.cpuUsPerRequest)} µs against the floor's ${f0(floor.streamThroughput.cpuUsPerRequest)} and Portkey's ${f0(pk.streamThroughput.cpuUsPerRequest)} µs per stream. ` +
      (cpuBound(gw.throughput) && cpuBound(pk.throughput)
        ? `Both closed loops kept the machine's ${cores} cores busy, so their ratio is a ratio of CPU per request (the store's included, on the same cores).`
        : `The closed loops were not CPU-bound (the machine was ${f0(gw.throughput.cpu.busy)}% busy under the gateway's, ${f0(pk.throughput.cpu.busy)}% under Portkey's): ${CFG.concurrency} requests in flight against an upstream that holds each ${CFG.simLatencyMs} ms serve at most ${CFG.concurrency} / latency, about ${f0(ceiling)}/s at the direct p50 of ${f2(direct.throughput.p50)} ms (the direct row, ${f0(direct.throughput.rps)}/s, is that ceiling measured), so each target's figure is ${CFG.concurrency} divided by its own latency under load (gateway p50 ${f2(gw.throughput.p50)} ms, Portkey ${f2(pk.throughput.p50)} ms).` +
          (TARGETS.throughputVsPortkey * pk.throughput.rps > ceiling ? ` ${TARGETS.throughputVsPortkey}x Portkey's ${f0(pk.throughput.rps)}/s is ${f0(TARGETS.throughputVsPortkey * pk.throughput.rps)}/s, above that ceiling: no proxy can meet it in this setup (with more in flight, BENCH_CONCURRENCY, the loops would be bound by CPU instead, where the CPU per request above decides).` : '')));
  }
  // Deferred against immediate posting (issue 30): the closed loop favours the one whose answers leave together.
  const immediate = rows.find((r) => r.variant === 'gw-immediate');
  if (immediate?.throughput && immediate.latency && gw.latency) {
    const at = (r) => r.latency.cpuUsPerRequest;
    out.push(`Deferred against immediate posting (issue 30): in the closed loop the default's process spent ${f0(gw.throughput.cpuUsPerRequest)} µs per request and \`post: immediate\` ${f0(immediate.throughput.cpuUsPerRequest)} µs; at the fixed ${CFG.rate} req/s of the latency phase ${f0(at(gw))} against ${f0(at(immediate))} µs. ` +
      `The deferred path runs less code per request (no statement per group of answers), but immediate posting releases its answers in groups, all those one asynchronous commit covered, in one turn of the event loop: their writes go out back to back, the load generator reads them in one wake-up and sends its next requests together, and the simulator answers those together, so every process serves several requests per wake-up. \`node bench/compare-post.mjs\` measures it apart: the gateway's user and system time and the load generator's own CPU per request, in the closed loop and at a fixed rate, for both modes; the load generator's, whose code is the same for both, falls too.`);
  }
  if (pk && direct?.latencyLow) {
    const pkLow = addedOf(pk, direct, 'latencyLow', 'p50');
    const pkHigh = addedOf(pk, direct, 'latency', 'p50');
    const chatLow = stages?.loads?.find((l) => l.key === 'chatLow');
    const ledgerMs = chatLow ? chatLow.rows.filter((r) => r.stage === 'admission' || r.stage === 'settle').reduce((a, r) => a + r.meanMs, 0) : NaN;
    out.push(`Against Portkey's added p50 (${f2(pkLow)} ms at ${CFG.lowRate} req/s, ${f2(pkHigh)} ms at ${CFG.rate}): Portkey is one hop with no store; the gateway is the same hop plus its admission and settle stages (on a credit grant, issue 30, both in memory: the charge is posted behind the answer)` +
      (chatLow ? ` (${f2(ledgerMs)} ms together, mean, in the per-stage run)` : '') +
      `, so its added p50 is below Portkey's only where Portkey's own processing costs more than those two calls (streaming: Portkey adds ${f2(addedOf(pk, direct, 'streamLatencyLow', 'ttfbP50'))} ms to the first byte, the gateway ${f2(addedOf(gw, direct, 'streamLatencyLow', 'ttfbP50'))}).`);
  }
  if (gw.latencyLow && direct?.latencyLow) {
    out.push(`Latency at ${CFG.lowRate} req/s: the gateway added ${f2(addedOf(gw, direct, 'latencyLow', 'p50'))} / ${f2(addedOf(gw, direct, 'latencyLow', 'p99'))} ms (p50 / p99)` +
      (floor ? `, the floor proxy ${f2(addedOf(floor, direct, 'latencyLow', 'p50'))} / ${f2(addedOf(floor, direct, 'latencyLow', 'p99'))} ms` : '') +
      (pk ? `, Portkey ${f2(addedOf(pk, direct, 'latencyLow', 'p50'))} / ${f2(addedOf(pk, direct, 'latencyLow', 'p99'))} ms` : '') +
      (gw.latencyLow.cpu.background > 15 || (floor?.latencyLow.cpu.background ?? 0) > 15
        ? ` (a disturbed phase: other processes took ${f0(gw.latencyLow.cpu.background)}% of the machine during the gateway's slices${floor ? `, ${f0(floor.latencyLow.cpu.background)}% during the floor's` : ''}, which inflates both` +
          (stages?.loads?.find((l) => l.key === 'chatLow') ? `; in the per-stage run, measured apart, the gateway added ${f2(stages.loads.find((l) => l.key === 'chatLow').client.mean - stages.loads.find((l) => l.key === 'chatLow').direct.mean)} ms on average` : '') + ')'
        : '') +
      `. The difference to the floor is the gateway's own work on the request's path, itemized in the per-stage table: the admission and settle stages (in memory on a credit grant, issue 30; a reserve and a settle round trip each on the strict path) and the CPU of the stages. At ${CFG.rate} req/s: ${f2(addedOf(gw, direct, 'latency', 'p50'))} / ${f2(addedOf(gw, direct, 'latency', 'p99'))} ms` +
      (floor ? ` (floor ${f2(addedOf(floor, direct, 'latency', 'p50'))} / ${f2(addedOf(floor, direct, 'latency', 'p99'))})` : '') +
      (pk ? ` (Portkey ${f2(addedOf(pk, direct, 'latency', 'p50'))} / ${f2(addedOf(pk, direct, 'latency', 'p99'))})` : '') +
      `, with the machine ${f0(gw.latency.cpu?.busy)}% busy: each hop also waits for a core, and the p99 is the requests that waited longest.`);
  }
  const chatLow = stages?.loads?.find((l) => l.key === 'chatLow');
  if (chatLow && floor && direct) {
    const st = (name) => chatLow.rows.find((r) => r.stage === name);
    const own = chatLow.rows.filter((r) => r.stage !== 'upstream').reduce((a, r) => a + (Number.isNaN(r.meanMs) ? 0 : r.meanMs), 0);
    const ledger = st('admission').meanMs + st('settle').meanMs;
    out.push(`Why the added latency is above the floor's (per-stage timings, non-streaming at ${CFG.lowRate} req/s, means): the gateway's stages take ${f2(own)} ms on the request's path, of which ${f2(ledger)} ms are admission (${f2(st('admission').meanMs)}: the limiter and the quote, admitted on the account's credit grant in memory) and settle (${f2(st('settle').meanMs)}: the bill, queued for the flusher); auth, validate, translate and the write together ${f2(own - ledger)} ms. With credit grants (issue 30) a request on a grant makes no store round trip: admission and settle are in-memory bookkeeping, and the charge is posted by the flusher behind the answer (what remains in those two stages is the limiter, the quote and the bill).${baselines?.roundTrip ? ` On this machine a round trip to PostgreSQL (\`SELECT 1\`, median) takes ${f2(baselines.roundTrip.hotMs)} ms back to back but ${f2(baselines.roundTrip.idleMs)} ms after ${baselines.roundTrip.afterMs} ms of idleness (the sleeping backend, then the sleeping gateway, are woken): a request on the strict path (a cold account, a job) pays that wake-up on each of its two ledger round trips; one on a grant pays none.` : ''}${aloneNote(chatLow)} The p99s of those stages under load: admission p99 ${f2(st('admission').p99Ms)} ms and settle p99 ${f2(st('settle').p99Ms)} ms at ${CFG.lowRate} req/s` +
      (stages.loads.find((l) => l.key === 'chat') ? `, ${f2(stages.loads.find((l) => l.key === 'chat').rows.find((r) => r.stage === 'admission').p99Ms)} and ${f2(stages.loads.find((l) => l.key === 'chat').rows.find((r) => r.stage === 'settle').p99Ms)} ms at ${CFG.rate} req/s (a request that arrives while a batch is in flight waits for it, then goes in the next)` : '') + '.' +
      ' Three causes of stalls behind the p99 were found with node --trace-gc, the gateway\'s own request durations and the server\'s auto_explain, and removed: the PostgreSQL pools closed connections idle for 10 s, so every burst, and every background job tick at :00 and :30, opened new ones (about 15 ms each here) while requests waited (40-150 ms stalls); the ledger\'s generic plans, made while the holds table was small, read the whole table once it had grown (30-100 ms per batch at 7,500 holds); and an AbortSignal per request, which on Node 20 no scavenge collects, carried each request\'s objects into the old generation. What is left in the p99 at this rate are the old generation\'s collections (a mark-compact every 5 to 12 s, pausing 3 to 18 ms) and the variance of the two waits themselves: on this machine an fdatasync takes 0.18 ms back to back and 0.65 ms after 10 ms of idleness (measured apart), and a settle waits for one. Rarer and longer: in probes at ' + CFG.lowRate + ' streaming req/s after closed loops (2026-11-29, sixteen 20 s runs), up to two stalls of 70-250 ms per run (one of 1 s; some runs had none), in which every request that arrived waited; with `GATEWAY_STAGE_TIMINGS=1`, such a stall showed 2 reserve and 2 settle statements over 50 ms and 12 admissions over 50 ms (the reserves behind them waiting for the group commit), while the load generator\'s event loop never lagged more than 13 ms: consistent with a WAL flush that stalled on this machine\'s disk, with the reserves of the same account waiting on the account row that a settle holds until its durable commit ends. The background jobs\' ticks no longer stall requests: they ran a transaction and took an advisory lock every 5 s even with nothing due, on a cron library that spent about 0.7 ms of the event loop computing each next time; each tick now reads one index first (nothing due: no transaction, no lock), on croner (about 40 µs).');
  }
  if (gw.open && baselines) {
    const fresh = gw.openFresh;
    out.push(`Memory: the gateway starts at ${f0(gw.open.rssStartMb)} MB resident. Its token counter no longer loads gpt-tokenizer's o200k module at start (${f0(baselines.gptTokenizerMb - baselines.nodeMb)} MB over a bare node's ${f0(baselines.nodeMb)} MB); it reads a compact table (src/bpe.ts, ${f0(baselines.tokenizerMb - baselines.nodeMb)} MB over a bare node, counts identical) on the first count, which the rate-limit stage's input estimate asks for on the first billable request. With ${CFG.openStreams} streams open it was at ${f0(gw.open.rssAllOpenMb)} MB (peak ${f0(gw.open.rssPeakMb)} MB during the phase, from ${f0(gw.open.rssBeforeMb)} MB idle after the load phases${mallocHeapNote(gw.open)})` +
      (fresh ? `; on a freshly started gateway the same ${CFG.openStreams} streams took it from ${f0(fresh.rssBeforeMb)} to ${f0(fresh.rssAllOpenMb)} MB (peak ${f0(fresh.rssPeakMb)})` : '') +
      (fresh ? `: about ${f0((fresh.rssAllOpenMb - fresh.rssBeforeMb) * 1024 / CFG.openStreams)} KB per open stream, most of it Node's own per-connection state (two sockets, an HTTP parser each, undici's and http's request objects) and the request's objects in the pipeline` : '') +
      (floor?.open ? `. The floor proxy, with no code of its own, starts at ${f0(floor.open.rssStartMb)} MB (node, node:http and undici), was at ${f0(floor.open.rssBeforeMb)} MB after the load phases${mallocHeapNote(floor.open)} and ${f0(floor.open.rssAllOpenMb)} MB with the streams open (peak ${f0(floor.open.rssPeakMb)})` : '') +
      (gwLite?.open ? `. The embedded store is in the PGlite gateway's process: PGlite alone (in memory, migrated) is ${f0(baselines.pgliteMb)} MB resident here, and that gateway ${f0(gwLite.open.rssAllOpenMb)} MB with the streams open` : '') + '.' +
      ' V8\'s young generation grows to its maximum during start-up and stays there: `npm start` caps it with `--max-semi-space-size=8` (16 MB in all instead of 32). Measured apart (2026-11-28, A/B in both start orders, fresh gateways on PostgreSQL): the cap starts the gateway 12-14 MB lower and holds 1000 fresh streams at 142-144 MB against 152-157 (peak 149-152 against 159-163); closed loops: chat on PostgreSQL 0-4% fewer requests a second, streams and chat on PGlite within 1% (an earlier measurement, before a request allocated less, had found 7-9% on PGlite).' +
      ' Measured apart again (2026-11-28, later; 6 s closed loops of chat then streams, then 1000 streams; CPU A/B in both start orders): the heap the load phases leave is garbage V8 has not yet collected, not memory the gateway holds: idle, V8\'s memory reducer gave it back after 20 to 25 s (230 to 126 MB resident; young generation 32 to 0.3 MB, old 97 to 24 MB). Measured apart (2026-11-29, the same loops, then a full collection forced through `--expose-gc`): what V8 gives back is not all of it. Collected, V8\'s heap was back at its start-up size (47 MB) and the process still held 149 to 150 MB; after the same loops, malloc\'s heap (the C library\'s main arena) held 35 to 41 MB in four runs, against 7 to 9 MB at start. heaptrack, at the same point without the forced collection, found 16 MB of it in 44,000 live allocations made by socket reads: Node copies each read into a buffer of its own, freed only when V8 collects the Buffer, which after a request that outlived two young-generation collections happens in the old generation, seconds later. Once freed, the C library keeps the space, fragmented between allocations still live. Neither `MALLOC_ARENA_MAX=2` (41 MB) nor a 32 KB `MALLOC_MMAP_THRESHOLD_` (35 MB) changed that. The floor proxy\'s malloc heap grows too, less; Portkey\'s more (the table\'s malloc column). What would keep it down under load costs throughput: adding `--heap-growing-percent=30` to the cap held 137 MB after the load phases and 145 MB with the streams open (peak 155), at 23% more CPU per request; `--optimize-for-size` held 112 and 128 MB (peak 135), at 2.7 times the CPU per request. Neither is set.');
  }
  return out;
}

/** The markdown report of a run. */
export function report({ machine, results, pgVersion, portkey, profile, stages, targets, command, startedAt, durationS, baselines }) {
  const rows = results;
  const { direct, floor } = roles(rows);
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
  L.push(`- Every party is a separate process on this machine: the simulator (\`node dist/src/sim/main.js\`, SIM_LATENCY_MS=${CFG.simLatencyMs}: ${CFG.simLatencyMs} ms before every answer's headers, then the stream's events back to back), the floor proxy (\`node bench/floor-proxy.mjs\`: a node:http server passing each request to the simulator over an undici pool and streaming the answer back, no store, nothing else: the least any Node gateway adds), the gateway (\`node ${[...startFlags(ROOT), 'dist/src/main.js'].join(' ')}\`, as \`npm start\` runs it, with every provider's key and base URL pointing at the simulator, so no built-in simulator), Portkey, PostgreSQL, and the load generator (this script, undici pools, HTTP/1.1 keep-alive). All share the ${machine.cores} cores, so every figure includes the load generator's and the simulator's own CPU use.`);
  L.push(`- Requests: chat \`${CHAT_MODEL}\`, \`max_tokens: ${MAX_TOKENS}\` (the simulator's natural reply cut at ${MAX_TOKENS} tokens: 18 words, 21 SSE events when streamed; 24 words and 27 events before its answers stopped filling max_tokens, issue 31 item 13; each chunk ending with an \`obfuscation\` padding member as OpenAI's do by default), 64 distinct prompts in rotation. The gateway meters every request (reserve, then settle to usage rows) on one account with a $1,000,000 balance.`);
  L.push(`- Latency: open loop at a fixed rate (${CFG.lowRate} and ${CFG.rate} req/s non-streaming; ${CFG.lowRate} and ${CFG.streamRate}/s streaming) for ${CFG.seconds} s per target after a ${CFG.warmupSeconds} s warm-up; each request timed from its send to its last byte (TTFB: to its first body byte). *Added* = the target's percentile minus the same percentile of the client calling the simulator directly at the same rate. A target that falls more than a second behind (more than max(256, rate) requests in flight) is marked overloaded and the phase stops there: its latencies are then queueing, not overhead.`);
  L.push(`- Throughput: closed loop, ${CFG.concurrency} requests in flight for ${CFG.seconds} s per target; answers with status 200 (and, for streams, a complete stream) per second. "CPU/req" is the target process's user+system CPU time per answered request (PostgreSQL's is not in it); "machine busy" is the whole machine's CPU use during the phase (all cores = 100%), "of which PostgreSQL" the gateway database's backends.`);
  L.push(`- All targets run at once (idle when not measured). Each phase warms every target up, then runs ${CFG.rounds} round(s) in which every target gets ${(CFG.seconds / CFG.rounds).toFixed(1)} s of the load in turn (order rotated per round); a row's figures merge its slices. Before each phase the script waits (up to ${CFG.quietWaitSeconds} s) for the machine to be under 20% busy. "Background CPU" is the share of the whole machine other processes (not this script, the simulator, the target or the target's PostgreSQL backends) took during the row's slices, time-weighted; above 15% (bold) the row's absolute figures are inflated, though the targets of one phase shared the disturbance.`);
  L.push(`- The gateway's account gets rate limits far above the load (PATCH /admin/accounts/{id}) so that admission control runs without refusing; the default limits (6,000 req/min, 256 concurrent) would refuse this load.`);
  L.push(`- Translated stream: \`${TRANSLATED_MODEL}\` on \`/v1/chat/completions\`, a messages-format offering; the direct baseline is the same request in messages format sent to the simulator's \`/v1/messages\`. Portkey runs the same translation with \`x-portkey-provider: anthropic\`. The floor proxy translates nothing and has no row there.`);
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
  L.push(`| Target | req/s | p50 / p99 (ms) | CPU/req of the target (µs) | machine busy | of which PostgreSQL (CPU/req, µs) | background CPU | errors | req/s over ${CFG.accounts} accounts (CPU/req, background) |`);
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const t = r.throughput; const m = r.throughputMulti;
    const multi = m ? `${f0(m.rps)} (${f0(m.cpuUsPerRequest)} µs, ${bgCell(m)})${m.errors ? ` ${errCell(m)} errors` : ''}` : '—';
    L.push(`| ${r.label} | ${f0(t.rps)} | ${f2(t.p50)} / ${f2(t.p99)} | ${r.kind === 'direct' ? '—' : f0(t.cpuUsPerRequest)} | ${f0(t.cpu.busy)}% | ${pgCell(t)} | ${bgCell(t)} | ${errCell(t)} | ${multi} |`);
  }
  L.push('', `The last column is a diagnostic: the same closed loop with the requests spread over ${CFG.accounts} accounts (one key each) instead of one.`);
  for (const r of rows) {
    for (const [key, what] of [['throughput', 'one account'], ['throughputMulti', `${CFG.accounts} accounts`]]) {
      const waits = r[key]?.waits;
      if (!waits?.length) continue;
      L.push('', `PostgreSQL backends of ${r.label} during the closed loop (${what}), sampled every 20 ms: average number of backends per state and statement (idle backends left out; the ledger's statements run on two pools of 2 connections, everything else on a pool of 10).`, '');
      L.push('| backends | state | waiting on | statement |', '|--:|---|---|---|');
      for (const w of waits.slice(0, 8)) L.push(`| ${w.avg.toFixed(2)} | ${w.state} | ${w.wait} | \`${w.query.replace(/\|/g, '\\|')}\` |`);
    }
  }
  const work = rows.find((r) => r.storeWork)?.storeWork;
  if (work) L.push('', `PostgreSQL work per non-streaming request of the gateway (pg_stat_database over ${work.requests} requests): ${work.transactions.toFixed(2)} transactions, ${work.inserted.toFixed(2)} rows inserted, ${work.updated.toFixed(2)} rows updated, ${work.fetched.toFixed(2)} rows fetched.`);
  L.push('');

  L.push('## Streaming chat: latency (open loop)', '');
  L.push(`TTFB is the time to the first body byte; "last byte" the whole stream (${MAX_TOKENS + 3} events), which for the gateway includes the settle before the closing frame.`, '');
  const sLo = `@${CFG.lowRate}/s`;
  const sHi = `@${CFG.streamRate}/s`;
  L.push(`| Target | TTFB p50 ${sLo} (ms) | added TTFB p50 / p99 ${sLo} | added last byte p50 / p99 ${sLo} | TTFB p50 ${sHi} (ms) | added TTFB p50 / p99 ${sHi} | added last byte p50 / p99 ${sHi} | served ${sHi} | background CPU | errors |`);
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const lo = r.streamLatencyLow; const hi = r.streamLatency;
    const pair = (phase, a, b) => (r.kind === 'direct' ? '—' : `${signed(addedOf(r, direct, phase, a))} / ${signed(addedOf(r, direct, phase, b))}`);
    L.push(`| ${r.label} | ${f2(lo.ttfbP50)} | ${pair('streamLatencyLow', 'ttfbP50', 'ttfbP99')} | ${pair('streamLatencyLow', 'p50', 'p99')} | ${f2(hi.ttfbP50)} | ${pair('streamLatency', 'ttfbP50', 'ttfbP99')} | ${pair('streamLatency', 'p50', 'p99')} | ${f0(hi.rps)}/s${hi.overloaded ? ' **overloaded**' : ''} | ${bgCell(lo, hi)} | ${errCell(lo, hi)} |`);
  }
  L.push('');
  L.push(`## Streaming chat: throughput (closed loop, ${CFG.concurrency} in flight)`, '');
  L.push('| Target | streams/s | TTFB p50 at max (ms) | whole stream p50 / p99 (ms) | CPU/stream of the target (µs) | machine busy | of which PostgreSQL (CPU/stream, µs) | background CPU | errors |');
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const t = r.streamThroughput;
    L.push(`| ${r.label} | ${f0(t.rps)} | ${f2(t.ttfbP50)} | ${f2(t.p50)} / ${f2(t.p99)} | ${r.kind === 'direct' ? '—' : f0(t.cpuUsPerRequest)} | ${f0(t.cpu.busy)}% | ${pgCell(t)} | ${bgCell(t)} | ${errCell(t)} |`);
  }
  L.push('');

  L.push(`## Translated streaming chat (${TRANSLATED_MODEL} on /v1/chat/completions)`, '');
  L.push(`| Target | TTFB p50 @${CFG.streamRate}/s (ms) | TTFB p99 (ms) | added TTFB p50 (ms) | added TTFB p99 (ms) | whole stream p50 / p99 (ms) | served @${CFG.streamRate}/s | throughput x${CFG.concurrency} (streams/s) | TTFB p50 at max (ms) | CPU/stream (µs) | machine busy at max | background CPU | errors |`);
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const a = r.translatedLatency; const t = r.translatedThroughput; const d = direct.translatedLatency;
    if (!a || !t) continue;
    const added = r.kind === 'direct' ? ['—', '—'] : [signed(a.ttfbP50 - d.ttfbP50), signed(a.ttfbP99 - d.ttfbP99)];
    L.push(`| ${r.label}${r.kind === 'direct' ? ' (/v1/messages)' : ''} | ${f2(a.ttfbP50)} | ${f2(a.ttfbP99)} | ${added[0]} | ${added[1]} | ${f2(a.p50)} / ${f2(a.p99)} | ${f0(a.rps)}/s${a.overloaded ? ' **overloaded**' : ''} | ${f0(t.rps)} | ${f2(t.ttfbP50)} | ${r.kind === 'direct' ? '—' : f0(t.cpuUsPerRequest)} | ${f0(t.cpu.busy)}% | ${bgCell(a, t)} | ${errCell(a, t)} |`);
  }
  L.push('');

  L.push('## Embeddings (text-embedding-3-small on /v1/embeddings, a quantity meter on the generic engine)', '');
  L.push(`| Target | p50 @${CFG.lowRate}/s (ms) | p99 (ms) | added p50 (ms) | added p99 (ms) | throughput x${CFG.concurrency} (req/s) | p50 at max (ms) | machine busy at max | background CPU | errors |`);
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const a = r.embeddingsLatency; const t = r.embeddingsThroughput; const d = direct.embeddingsLatency;
    if (!a || !t || !d) continue;
    const added = r.kind === 'direct' ? ['—', '—'] : [signed(a.p50 - d.p50), signed(a.p99 - d.p99)];
    L.push(`| ${r.label} | ${f2(a.p50)} | ${f2(a.p99)} | ${added[0]} | ${added[1]} | ${f0(t.rps)} | ${f2(t.p50)} | ${f0(t.cpu.busy)}% | ${bgCell(a, t)} | ${errCell(a, t)} |`);
  }
  L.push('');

  const withOpen = rows.filter((r) => r.open);
  if (withOpen.length) {
    L.push(`## Resident memory with ${CFG.openStreams} open streams`, '');
    L.push('| Target | RSS at start (MB) | RSS idle after the other phases (MB) | RSS, all open (MB) | peak RSS in phase (MB) | VmHWM since start (MB) | of which malloc\'s heap: at start / idle / all open (MB) | of which the embedded store (MB) | streams open / completed | seconds to open all | TTFB p50 / p99 (ms) | background CPU |');
    L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    const line = (label, o, store) => `| ${label} | ${f0(o.rssStartMb)} | ${f0(o.rssBeforeMb)} | ${f0(o.rssAllOpenMb)} | ${f0(o.rssPeakMb)} | ${f0(o.hwmMb)} | ${f0(o.mallocStartMb)} / ${f0(o.mallocBeforeMb)} / ${f0(o.mallocAllOpenMb)} | ${store} | ${o.opened} / ${o.ok} of ${o.count} | ${f2(o.secondsToOpenAll)} | ${f2(o.ttfbP50)} / ${f2(o.ttfbP99)} | ${bgCell(o)} |`;
    for (const r of withOpen) {
      const store = r.kind === 'gateway' && r.store === 'pglite' ? `about ${f0(baselines.pgliteMb - baselines.nodeMb)} (PGlite alone: ${f0(baselines.pgliteMb)})` : r.kind === 'gateway' ? 'none (PostgreSQL server)' : '—';
      L.push(line(r.label, r.open, store));
      if (r.openFresh) L.push(line(`${r.label}, freshly started`, r.openFresh, 'none (PostgreSQL server)'));
    }
    L.push('', `For scale: a bare \`node\` process is ${f0(baselines.nodeMb)} MB resident here; ${f0(baselines.tokenizerMb)} MB once it has counted a token with the gateway's tokenizer (src/bpe.ts's compact o200k table); ${f0(baselines.gptTokenizerMb)} MB once it has loaded \`gpt-tokenizer/encoding/o200k_base\` (what the gateway imported at start before); ${f0(baselines.pgliteMb)} MB running the embedded store alone (PGlite in memory, migrated), which the PGlite gateway's RSS includes.`);
    L.push('');
  }

  L.push('## Targets (gateway with metering on PostgreSQL)', '');
  L.push('| Target | Goal | Measured | Verdict |', '|---|---|---|---|');
  for (const t of targets) L.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.verdict} |`);
  L.push('');
  L.push(...baselineSection(rows));
  L.push(...variantSections(rows));
  const why = explain(rows, baselines, stages);
  if (why.length) L.push('Why, from the measurements above:', '', ...why.map((w) => `- ${w}`), '');

  if (stages?.loads?.length) L.push(...stageSection(stages, floor, direct));

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

/**
 * The gateway's (PostgreSQL) figures against TARGETS, one verdict per goal: added latency against the
 * floor proxy's and Portkey's, throughput against Portkey's and the floor's, memory with the open streams.
 */
export function evaluateTargets(results) {
  const { gw, pk, floor, direct } = roles(results);
  const out = [];
  if (!gw || !direct) return out;
  const add = (r, phase, key) => addedOf(r, direct, phase, key);
  const ms = (v) => `${signed(v)} ms`;
  const lo = CFG.lowRate;
  // Other processes' CPU during a compared row's slices (above 15%: that row's figures are inflated).
  const disturbed = (phase, ...others) => {
    const hit = [['gateway', gw], ['direct', direct], ...others].filter(([, r]) => (r?.[phase]?.cpu?.background ?? 0) > 15);
    return hit.length ? `; **disturbed**: other processes took ${hit.map(([name, r]) => `${f0(r[phase].cpu.background)}% (${name})`).join(', ')} of the machine during these slices` : '';
  };

  // 1. Added p50 at the low rate within nearFloorMs of the floor proxy's.
  if (floor) {
    for (const [phase, what, keys] of [['latencyLow', 'non-streaming', [['p50', '']]], ['streamLatencyLow', 'streaming', [['ttfbP50', 'TTFB '], ['p50', 'last byte ']]]]) {
      const parts = keys.map(([key, name]) => {
        const over = add(gw, phase, key) - add(floor, phase, key);
        return { name, over, text: `${name}${ms(add(gw, phase, key))} vs the floor's ${ms(add(floor, phase, key))}: ${over >= 0 ? '+' : ''}${over.toFixed(2)} ms` };
      });
      const met = parts.every((p) => p.over <= TARGETS.nearFloorMs);
      out.push({
        name: `Added p50 at ${lo} req/s, ${what}, vs the floor proxy`, goal: `<= floor + ${TARGETS.nearFloorMs} ms`,
        measured: parts.map((p) => p.text).join('; ') + disturbed(phase, ['floor', floor]),
        verdict: met ? 'met' : `**missed by ${msFine(Math.max(...parts.map((p) => p.over - TARGETS.nearFloorMs)))}**`, met,
      });
    }
  }
  // 2, 3. Added p50 and p99 below Portkey's at both rates.
  if (pk) {
    for (const pct of ['p50', 'p99']) {
      for (const [phase, what, rate, keys] of [
        ['latencyLow', 'non-streaming', lo, [[pct, '']]], ['latency', 'non-streaming', CFG.rate, [[pct, '']]],
        ['streamLatencyLow', 'streaming', lo, [[`ttfb${pct.toUpperCase()}`, 'TTFB '], [pct, 'last byte ']]],
        ['streamLatency', 'streaming', CFG.streamRate, [[`ttfb${pct.toUpperCase()}`, 'TTFB '], [pct, 'last byte ']]],
      ]) {
        const parts = keys.map(([key, name]) => {
          const g = add(gw, phase, key);
          const p = add(pk, phase, key);
          return { g, p, text: `${name}${ms(g)} vs Portkey's ${ms(p)}` };
        });
        const met = parts.every((x) => x.g < x.p);
        const worst = Math.max(...parts.map((x) => x.g - x.p));
        out.push({
          name: `Added ${pct} at ${rate} req/s, ${what}, vs Portkey`, goal: `< Portkey's`,
          measured: parts.map((x) => x.text).join('; ') + (gw[phase].overloaded ? ` (gateway overloaded: served ${f0(gw[phase].rps)}/s)` : '') + disturbed(phase, ['Portkey', pk]),
          verdict: met ? `met (${msFine(-worst)} to spare)` : `**missed by ${msFine(worst)}**`, met,
        });
      }
    }
  }
  // 4. Throughput: at least throughputVsPortkey x Portkey's and throughputVsFloor x the floor's.
  for (const [key, what] of [['throughput', 'non-streaming'], ['streamThroughput', 'streaming'], ['translatedThroughput', 'translated streaming']]) {
    if (pk?.[key]) {
      const ratio = gw[key].rps / pk[key].rps;
      const met = ratio >= TARGETS.throughputVsPortkey;
      out.push({
        name: `Throughput, ${what} (x${CFG.concurrency}), vs Portkey`, goal: `>= ${TARGETS.throughputVsPortkey}x`,
        measured: `${ratio.toFixed(2)}x (${f0(gw[key].rps)} vs ${f0(pk[key].rps)}/s)${key === 'throughput' && gw.throughputMulti ? `; over ${CFG.accounts} accounts ${(gw.throughputMulti.rps / pk[key].rps).toFixed(2)}x` : ''}`,
        verdict: met ? 'met' : `**missed by ${f0(TARGETS.throughputVsPortkey * pk[key].rps - gw[key].rps)}/s** (needs ${f0(TARGETS.throughputVsPortkey * pk[key].rps)}/s, +${((TARGETS.throughputVsPortkey / ratio - 1) * 100).toFixed(0)}%)`, met,
      });
    }
    if (floor?.[key]) {
      const ratio = gw[key].rps / floor[key].rps;
      const met = ratio >= TARGETS.throughputVsFloor;
      out.push({
        name: `Throughput, ${what} (x${CFG.concurrency}), vs the floor proxy`, goal: `>= ${(TARGETS.throughputVsFloor * 100).toFixed(0)}%`,
        measured: `${(ratio * 100).toFixed(0)}% (${f0(gw[key].rps)} vs ${f0(floor[key].rps)}/s)`,
        verdict: met ? 'met' : `**missed by ${f0(TARGETS.throughputVsFloor * floor[key].rps - gw[key].rps)}/s** (needs ${f0(TARGETS.throughputVsFloor * floor[key].rps)}/s, +${((TARGETS.throughputVsFloor / ratio - 1) * 100).toFixed(0)}%)`, met,
      });
    }
  }
  // 5. Memory with the open streams (issue 30): within rssOverFloorMb of the floor proxy's, all open, same run.
  if (gw.open && floor?.open) {
    const limit = floor.open.rssAllOpenMb + TARGETS.rssOverFloorMb;
    const rss = gw.open.rssAllOpenMb;
    const fresh = gw.openFresh?.rssAllOpenMb ?? NaN;
    out.push({
      name: `Resident memory, ${CFG.openStreams} open streams, vs the floor proxy`, goal: `<= floor + ${TARGETS.rssOverFloorMb} MB`,
      measured: `${f0(rss)} MB with all open (peak ${f0(gw.open.rssPeakMb)} MB in the phase, idle before it ${f0(gw.open.rssBeforeMb)} MB) vs the floor's ${f0(floor.open.rssAllOpenMb)} MB: +${f0(rss - floor.open.rssAllOpenMb)} MB` + (gw.openFresh ? `; freshly started: ${f0(fresh)} MB` : ''),
      verdict: rss <= limit ? `met (${f0(limit - rss)} MB to spare)` : `**missed by ${f0(rss - limit)} MB**${Number.isFinite(fresh) ? (fresh <= limit ? ` (met on a fresh process, ${f0(limit - fresh)} MB to spare)` : ` (fresh process: by ${f0(fresh - limit)} MB)`) : ''}`,
      met: rss <= limit,
    });
  }
  return out;
}
