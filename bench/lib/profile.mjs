/** A CPU profile of the gateway under load (node --cpu-prof), and its summary. */

import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DIR, CFG, ROOT, progress } from './config.mjs';
import { waitForQuiet } from './cpu.mjs';
import { aggregate, closedLoop, newPool, openLoop, scenarios } from './load.mjs';
import { startGateway } from './processes.mjs';

/** Self time per function and per origin, from `skipMs` into the profile (after start-up, module loading) to `untilMs`. */
export function summarizeProfile(file, skipMs = 0, untilMs = Infinity) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < skipMs * 1000 || t > untilMs * 1000) continue;
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

/** Runs a gateway on PostgreSQL under node --cpu-prof through the non-streaming loads; its profile summarized. */
export async function profileGateway(simUrl, store) {
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

const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeString', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString', 'writeUcs2String']);

/** A paragraph reading a CPU profile summary: where the samples went and why. */
export function profileNote(profile) {
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
