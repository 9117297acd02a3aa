/**
 * Where the gateway's milliseconds go: a gateway on PostgreSQL started with GATEWAY_STAGE_TIMINGS=1
 * (each pipeline stage timed into gateway_stage_duration_seconds{stage}, GET /metrics), under the same
 * open-loop loads as the main run, beside the client calling the simulator directly at the same rate.
 */

import { CFG, progress } from './config.mjs';
import { waitForQuiet } from './cpu.mjs';
import { ledgerAloneSamples } from './db.mjs';
import { aggregate, newPool, openLoop, scenarios } from './load.mjs';
import { startGateway } from './processes.mjs';

/** The stages in pipeline order, with what each covers (the names are src/observability/stage-timings.ts's). */
export const STAGES = [
  ['auth', 'the key: hash, cache lookup (a store read on a miss)'],
  ['validate', 'the required headers and the request against its JSON Schema'],
  ['route', 'the offering, the operation that serves it and its translator'],
  ['admission', 'rate limits, the input token estimate, and the admission on the account\'s credit grant (in memory, issue 30; on the strict path a reserve: one ledger round trip)'],
  ['translate', 'the upstream body'],
  ['upstream', 'the upstream call, to the last byte of its answer (the simulator holds every answer 20 ms)'],
  ['settle', 'the bill, and its charge queued for the flusher (in memory on a grant; on the strict path a settle: one round trip and a durable commit)'],
  ['write', 'the last write of the answer (the JSON body, or the stream\'s closing frame)'],
];

/** The histograms of a /metrics text: name -> label text -> {buckets: [[le, cumulative]], sum, count}. */
function parseHistograms(text, names) {
  const out = new Map(names.map((n) => [n, new Map()]));
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+?)(_bucket|_sum|_count)\{(.*)\} (\S+)$/.exec(line);
    if (!m || !out.has(m[1])) continue;
    const [, name, part, labels, value] = m;
    const le = /(?:^|,)le="([^"]*)"/.exec(labels)?.[1];
    const key = labels.replace(/,?le="[^"]*"/, '');
    const series = out.get(name);
    if (!series.has(key)) series.set(key, { buckets: [], sum: 0, count: 0 });
    const s = series.get(key);
    if (part === '_bucket') s.buckets.push([le === '+Inf' ? Infinity : Number(le), Number(value)]);
    else if (part === '_sum') s.sum = Number(value);
    else s.count = Number(value);
  }
  return out;
}

async function scrape(url) {
  const res = await fetch(`${url}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  return parseHistograms(await res.text(), ['gateway_stage_duration_seconds', 'gateway_request_duration_seconds', 'gateway_store_statement_duration_seconds']);
}

/** after - before, series by series. */
function delta(before, after) {
  const out = new Map();
  for (const [name, series] of after) {
    const d = new Map();
    for (const [key, s] of series) {
      const b = before.get(name)?.get(key);
      d.set(key, {
        sum: s.sum - (b?.sum ?? 0), count: s.count - (b?.count ?? 0),
        buckets: s.buckets.map(([le, c], i) => [le, c - (b?.buckets[i]?.[1] ?? 0)]),
      });
    }
    out.set(name, d);
  }
  return out;
}

/** Adds one delta into an accumulator of the same shape. */
function accumulate(acc, d) {
  for (const [name, series] of d) {
    if (!acc.has(name)) acc.set(name, new Map());
    for (const [key, s] of series) {
      const a = acc.get(name).get(key);
      if (!a) { acc.get(name).set(key, structuredClone(s)); continue; }
      a.sum += s.sum; a.count += s.count;
      s.buckets.forEach(([, c], i) => { a.buckets[i][1] += c; });
    }
  }
}

/** A percentile (0..1) of a cumulative-bucket histogram, interpolated linearly inside its bucket, in seconds. */
function quantile(s, q) {
  if (!s || s.count === 0) return NaN;
  const rank = q * s.count;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const [le, cumulative] of s.buckets) {
    if (cumulative >= rank) {
      if (le === Infinity) return lowerLe;
      const inBucket = cumulative - lowerCount;
      return inBucket > 0 ? lowerLe + (le - lowerLe) * ((rank - lowerCount) / inBucket) : le;
    }
    lowerLe = le; lowerCount = cumulative;
  }
  return lowerLe;
}

/** Per stage: requests, mean, p50 and p99 in ms; plus the whole pipeline's mean (gateway_request_duration_seconds). */
function summarizeStages(acc) {
  const stages = acc.get('gateway_stage_duration_seconds') ?? new Map();
  // The stages the gateway reported, in pipeline order; one the bench does not know is added at the end.
  const known = new Set(STAGES.map(([stage]) => stage));
  const seen = [...stages.keys()].map((key) => /^stage="(.*)"$/.exec(key)?.[1]).filter(Boolean);
  const names = [...STAGES.filter(([stage]) => seen.includes(stage)), ...seen.filter((stage) => !known.has(stage)).map((stage) => [stage, '(a stage this report does not describe)'])];
  const rows = names.map(([stage, what]) => {
    const s = stages.get(`stage="${stage}"`);
    return { stage, what, count: s?.count ?? 0, meanMs: s && s.count ? (s.sum / s.count) * 1000 : NaN, p50Ms: quantile(s, 0.5) * 1000, p99Ms: quantile(s, 0.99) * 1000 };
  });
  let sum = 0;
  let count = 0;
  for (const s of (acc.get('gateway_request_duration_seconds') ?? new Map()).values()) { sum += s.sum; count += s.count; }
  // The ledger's prepared statements inside the gateway (gateway_store_statement_duration_seconds).
  const statements = [...(acc.get('gateway_store_statement_duration_seconds') ?? new Map())].map(([key, s]) => ({
    statement: /^statement="(.*)"$/.exec(key)?.[1] ?? key, count: s.count, meanMs: s.count ? (s.sum / s.count) * 1000 : NaN, p50Ms: quantile(s, 0.5) * 1000, p99Ms: quantile(s, 0.99) * 1000,
  })).filter((r) => r.count > 0);
  return { rows, statements, pipelineMeanMs: count ? (sum / count) * 1000 : NaN };
}

/** p50 and mean of some timings in ms. */
function spread(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return { n: sorted.length, p50Ms: sorted[Math.floor(sorted.length / 2)] ?? NaN, meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

const NO_CPU = { targetCpu: null, cpu: { busy: 0, own: 0, postgres: 0, background: 0 } };

/**
 * Runs the stage-timed gateway and the direct baseline through the open-loop loads (non-streaming at
 * the low and the high rate, streaming at the low rate), in CFG.rounds alternating slices each.
 */
export async function stageTimings(simUrl, store) {
  const gw = await startGateway('gateway (PostgreSQL, GATEWAY_STAGE_TIMINGS=1)', simUrl, store, [], { GATEWAY_STAGE_TIMINGS: '1' });
  const direct = { kind: 'direct', url: simUrl };
  const pools = { gw: newPool(gw.url, 256), direct: newPool(simUrl, 256) };
  const loads = [
    { key: 'chatLow', scenario: 'chat', rate: CFG.lowRate, title: `non-streaming at ${CFG.lowRate} req/s` },
    { key: 'chat', scenario: 'chat', rate: CFG.rate, title: `non-streaming at ${CFG.rate} req/s` },
    { key: 'streamLow', scenario: 'stream', rate: CFG.lowRate, title: `streaming at ${CFG.lowRate}/s` },
  ];
  // Half the main run's time per load and side: means over several hundred requests are stable enough.
  const seconds = Math.max(2, CFG.seconds / 2);
  const out = { label: gw.label, seconds, loads: [] };
  try {
    for (const load of loads) {
      await waitForQuiet();
      progress(`stage timings: ${load.title}`);
      await openLoop(pools.gw, scenarios(gw)[load.scenario], load.rate, CFG.warmupSeconds);
      await openLoop(pools.direct, scenarios(direct)[load.scenario], load.rate, CFG.warmupSeconds);
      const acc = new Map();
      const gwSlices = [];
      const directSlices = [];
      // Non-streaming at the low rate: the ledger's two statements from a bare client too, in slices
      // between the gateway's, so that both are measured in the same state of the machine.
      const alone = load.key === 'chatLow' && store.databaseUrl ? { reserve: [], settle: [] } : null;
      for (let round = 0; round < CFG.rounds; round++) {
        const before = await scrape(gw.url);
        gwSlices.push({ ...(await openLoop(pools.gw, scenarios(gw)[load.scenario], load.rate, seconds / CFG.rounds)), ...NO_CPU });
        accumulate(acc, delta(before, await scrape(gw.url)));
        directSlices.push({ ...(await openLoop(pools.direct, scenarios(direct)[load.scenario], load.rate, seconds / CFG.rounds)), ...NO_CPU });
        if (alone) {
          const slice = await ledgerAloneSamples(store.databaseUrl, gw.accountId, load.rate, seconds / CFG.rounds);
          alone.reserve.push(...slice.reserve);
          alone.settle.push(...slice.settle);
        }
      }
      const client = aggregate(gwSlices, load.rate);
      const baseline = aggregate(directSlices, load.rate);
      const stages = summarizeStages(acc);
      const ledgerAlone = alone ? { rate: load.rate, reserve: spread(alone.reserve), settle: spread(alone.settle) } : null;
      out.loads.push({ ...load, client, direct: baseline, ...stages, ledgerAlone });
      progress(`stage timings: ${load.title}: ${stages.rows.map((r) => `${r.stage} ${r.meanMs.toFixed(3)}`).join(', ')} ms (means); statements ${stages.statements.map((r) => `${r.statement} p50 ${r.p50Ms.toFixed(3)}`).join(', ')}; client added ${(client.mean - baseline.mean).toFixed(2)} ms (mean)`);
      if (ledgerAlone) progress(`stage timings: the ledger's statements alone, same slices (p50): reserve ${ledgerAlone.reserve.p50Ms.toFixed(3)} ms, settle ${ledgerAlone.settle.p50Ms.toFixed(3)} ms`);
    }
  } finally {
    await pools.gw.close();
    await pools.direct.close();
    await gw.proc.stop();
  }
  return out;
}
