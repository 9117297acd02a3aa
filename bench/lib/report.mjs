/** The markdown report of a run, the reasons behind its figures, and the verdicts against TARGETS. */

import os from 'node:os';
import { CFG, CHAT_MODEL, MAX_TOKENS, OPEN_STREAM_MODEL, PHASES, TARGETS, TRANSLATED_MODEL } from './config.mjs';

/** A number with two decimals, or n/a. */
export const f2 = (v) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(2));
/** A number with no decimals, or n/a. */
export const f0 = (v) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(0));
/** A number with two decimals and its sign, or n/a. */
export const signed = (v) => (Number.isNaN(v) ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
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

/** Data-driven reasons for the gateway's figures (PostgreSQL row against Portkey's and the direct one). */
export function explain(rows, baselines) {
  const gw = rows.find((r) => r.kind === 'gateway' && r.store === 'postgres');
  const pk = rows.find((r) => r.kind === 'portkey');
  const out = [];
  if (!gw) return out;
  const waits = gw.throughput.waits ?? [];
  const lockWaits = waits.filter((w) => w.wait.startsWith('Lock:')).reduce((a, w) => a + w.avg, 0);
  const lockedAccount = waits.filter((w) => w.wait.startsWith('Lock:') && /accounts/.test(w.query)).reduce((a, w) => a + w.avg, 0);
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
    out.push(`Memory: the gateway is at ${f0(gw.open.rssStartMb)} MB resident right after start, before any request; ${f0(baselines.tokenizerMb - baselines.nodeMb)} MB of that is the o200k tokenizer's table (a bare node is ${f0(baselines.nodeMb)} MB; node with the tokenizer ${f0(baselines.tokenizerMb)} MB). Before the open streams it was at ${f0(gw.open.rssBeforeMb)} MB, idle after the throughput phases (V8 keeps the heap it grew under load until it collects); with all ${CFG.openStreams} open ${f0(gw.open.rssAllOpenMb)} MB, and at most ${f0(gw.open.rssPeakMb)} MB while they opened (about ${CFG.openStreams} requests reserving and connecting within a second).`);
  }
  return out;
}

/** The markdown report of a run. */
export function report({ machine, results, pgVersion, portkey, profile, targets, command, startedAt, durationS, baselines }) {
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

/** The gateway's (PostgreSQL) figures against TARGETS: one verdict per goal. */
export function evaluateTargets(gw, portkeyResult, direct) {
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
