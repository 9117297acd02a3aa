/** PostgreSQL: the admin connection, the bench database, backend activity sampling, commit and ledger latency. */

import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { CFG, ROOT } from './config.mjs';

/** The median of some timings (sorts them in place). */
const median = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];

/** A PostgreSQL URL (a URL object), given the OS user as its user name when it names none and PGUSER is unset. */
export function withUser(raw) {
  const url = new URL(raw);
  if (!url.username && !process.env.PGUSER) url.username = process.env.USER || os.userInfo().username;
  return url;
}

/** Runs one statement on the admin database and returns its rows. */
export async function adminSql(sql) {
  const client = new pg.Client({ connectionString: withUser(CFG.adminUrl).toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try { return (await client.query(sql)).rows; } finally { await client.end(); }
}

/** Creates a fresh gw_bench_<random> database: its name, URL and server version. */
export async function createDatabase() {
  const name = `gw_bench_${randomBytes(6).toString('hex')}`;
  const [{ version }] = await adminSql('SELECT version()');
  await adminSql(`CREATE DATABASE ${name}`);
  const url = withUser(CFG.adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), version: String(version).split(' on ')[0] };
}

/**
 * Samples pg_stat_activity of `database` every 20 ms until stopped: what the gateway's backends are
 * doing (running, waiting on a lock, idle in a transaction waiting for the gateway) and on which statement.
 */
export async function sampleActivity(database, carry = { samples: 0, counts: new Map() }) {
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
export function summarizeActivity({ samples, counts }) {
  return [...counts].map(([key, n]) => { const [state, wait, query] = JSON.parse(key); return { state, wait, query, avg: n / samples }; })
    .sort((a, b) => b.avg - a.avg);
}

/**
 * The floor under every metered request: the median time of one committed single-row insert on
 * this PostgreSQL (a round trip and a WAL flush), timed from a client on this machine, one at a time;
 * with `synchronous: false`, the same without waiting for the flush (synchronous_commit = off).
 */
export async function commitLatencyMs(databaseUrl, n = 200, { synchronous = true } = {}) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    if (!synchronous) await client.query('SET synchronous_commit = off');
    await client.query('CREATE TABLE bench_commit (n int)');
    const times = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await client.query('INSERT INTO bench_commit VALUES ($1)', [i]);
      times.push(performance.now() - start);
    }
    await client.query('DROP TABLE bench_commit');
    return median(times);
  } finally {
    await client.end();
  }
}

/**
 * The median round trip of `SELECT 1` on one connection, back to back and after `idleMs` of idleness
 * each time: on a machine whose cores sleep when idle, every round trip a request makes at a low rate
 * also pays for waking the database backend and then the gateway (what an open loop at 100 req/s meets).
 */
export async function roundTripMs(databaseUrl, n = 200, idleMs = 10) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const hot = [];
    const idle = [];
    for (let i = 0; i < n; i++) {
      let start = performance.now();
      await client.query('SELECT 1');
      hot.push(performance.now() - start);
      await sleep(idleMs);
      start = performance.now();
      await client.query('SELECT 1');
      idle.push(performance.now() - start);
    }
    return { hotMs: median(hot), idleMs: median(idle), afterMs: idleMs };
  } finally {
    await client.end();
  }
}

/**
 * The ledger's two statements alone, as the gateway sends them but from a bare client: the gateway's
 * own prepared reserve (on a session with synchronous_commit off) and, `CFG.simLatencyMs` later, its
 * durable settle of one usage row, for `seconds` at `rate` requests a second against `accountId` of
 * the migrated database at `databaseUrl`. Each round trip's time in ms ({reserve: [], settle: []}):
 * what the two ledger calls on every metered request's path cost on this machine before any of the
 * gateway's own code runs. The per-stage run (stages.mjs) takes its slices between the gateway's.
 */
export async function ledgerAloneSamples(databaseUrl, accountId, rate = CFG.lowRate, seconds = 5) {
  const built = (module) => import(pathToFileURL(join(ROOT, 'dist/src', module)).href);
  const { RESERVE_ONE, SETTLE_ONE } = await built('ledger/hold-statements.js');
  const { STATEMENT_SESSIONS } = await built('store/postgres.js');
  // The sessions the gateway's own statement pools open (src/store/postgres.ts), one per commit mode.
  const pool = (commit) => new pg.Pool({ connectionString: databaseUrl, max: 2, options: STATEMENT_SESSIONS[commit] });
  const reserves = pool(RESERVE_ONE.commit);
  const settles = pool(SETTLE_ONE.commit);
  const timed = async (p, statement, values) => {
    const start = performance.now();
    await p.query({ name: statement.name, text: statement.text, values });
    return performance.now() - start;
  };
  const tag = randomBytes(4).toString('hex');
  const samples = { reserve: [], settle: [] };
  const request = async (i, into = samples) => {
    const hold = `hold_bench_${tag}_${i}`;
    into.reserve.push(await timed(reserves, RESERVE_ONE, [hold, accountId, '1000', 60_000]));
    await sleep(CFG.simLatencyMs);
    const row = { id: `use_bench_${tag}_${i}`, request_id: `req_bench_${tag}_${i}`, model: 'bench', kind: 'tokens', quantity: '24', unit: 'token', amount: '500', details: {}, key_id: null };
    into.settle.push(await timed(settles, SETTLE_ONE, [hold, accountId, JSON.stringify([row])]));
  };
  try {
    // Untimed: both connections of each pool opened and their statements prepared, as in a running gateway.
    for (let round = 0; round < 2; round++) await Promise.all([0, 1].map((k) => request(`warm${round}${k}`, { reserve: [], settle: [] })));
    const pending = [];
    const start = performance.now();
    for (let i = 0; i < rate * seconds; i++) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(request(i).then(() => null, (error) => error));
    }
    const failed = (await Promise.all(pending)).find((e) => e !== null);
    if (failed) throw failed;
    return samples;
  } finally {
    await Promise.all([reserves.end(), settles.end()]);
  }
}
