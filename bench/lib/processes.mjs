/** Child processes: the simulator, the gateways and Portkey, each its own node process. */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { ADMIN_TOKEN, BENCH_DIR, CFG, ROOT, progress } from './config.mjs';
import { mallocHeapMbOf, memoryOf } from './cpu.mjs';
import { benchConfig, signingProviderFiles } from './variants.mjs';

/** The child processes still running (killed on exit). */
export const children = new Set();

/** A TCP port free on 127.0.0.1 at the time of the call. */
export async function freePort() {
  const server = net.createServer();
  await new Promise((ok, fail) => { server.once('error', fail); server.listen(0, '127.0.0.1', ok); });
  const { port } = server.address();
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Every provider manifest's key and base URL variables, as `root`/providers/*.yaml name them. */
function providersOf(root) {
  const left = new Set(signingProviderFiles(root));
  return readdirSync(join(root, 'providers')).filter((f) => f.endsWith('.yaml') && !left.has(f)).map((f) => {
    const m = parse(readFileSync(join(root, 'providers', f), 'utf8'));
    // A key pool (`auth.keys`, issue 29) is made live by its first key.
    return { id: m.id, keyEnv: (m.auth.key ?? m.auth.keys[0]).slice('env:'.length), urlEnv: m.base_url.env, path: m.base_url.default ? new URL(m.base_url.default).pathname.replace(/\/$/, '') : '' };
  });
}

const PROVIDERS = providersOf(ROOT);

/**
 * Every provider live on the bench's simulator (a key and the simulator's URL under the vendor's own
 * path prefix), so that no gateway starts a simulator of its own inside the process being measured.
 */
function providersOn(simUrl, providers = PROVIDERS) {
  return Object.fromEntries(providers.flatMap((p) => [[p.keyEnv, 'sk-bench'], [p.urlEnv, simUrl + p.path]]));
}

const PROVIDER_ENV = new Set(PROVIDERS.flatMap((p) => [p.keyEnv, p.urlEnv]));

/** The parent's environment without anything that would change what the gateway or simulator does. */
export function cleanEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (PROVIDER_ENV.has(k) || /^(OPENAI_|ANTHROPIC_|COHERE_|AZURE_|DATABASE_URL$|REDIS_URL$|GATEWAY_|SIM_|PORT$|NODE_OPTIONS$|npm_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** The npm executable's name on this platform. */
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Spawns a process and resolves once a line of its output matches `ready`. */
export async function startProcess(name, args, { env, cwd = ROOT, ready, timeoutMs = 60_000 }) {
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

/** SIGKILLs every child process still running. */
export function killChildren() {
  for (const child of children) { try { child.kill('SIGKILL'); } catch { /* gone */ } }
}
process.on('exit', killChildren);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { killChildren(); process.exit(130); });

/**
 * Checks out `ref` into bench/.baseline/<commit>/ (a git worktree, once) and builds it there, with this
 * checkout's node_modules when its lockfile is the same, else with its own (npm ci); returns its root,
 * to start its gateway beside the current one.
 */
export function prepareBaseline(ref) {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const commit = git('rev-parse', '--short', `${ref}^{commit}`).stdout.trim();
  if (!commit) throw new Error(`BENCH_BASELINE_REF ${ref} is not a commit of this repository`);
  const dir = join(BENCH_DIR, '.baseline', commit);
  if (!existsSync(join(dir, 'package.json'))) {
    progress(`checking out ${commit} into ${relative(ROOT, dir)}/`);
    const added = git('worktree', 'add', '--detach', '--force', dir, commit);
    if (added.status !== 0) throw new Error(`git worktree add ${dir} failed: ${added.stderr}`);
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    // The same lockfile: this checkout's packages serve. Another (a dependency added or dropped since):
    // the baseline installs its own, or it would not build, or would run on packages it never had.
    const lock = (root) => readFileSync(join(root, 'package-lock.json'), 'utf8');
    if (lock(dir) === lock(ROOT)) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    else {
      progress(`installing ${commit}'s own packages (its package-lock.json differs)`);
      const installed = spawnSync(NPM, ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
      if (installed.status !== 0) throw new Error(`npm ci in ${dir} failed`);
    }
  }
  if (!existsSync(join(dir, 'dist/src/main.js'))) {
    progress(`building ${commit}`);
    const built = spawnSync(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: dir, stdio: 'inherit' });
    if (built.status !== 0) throw new Error(`building ${commit} in ${dir} failed`);
  }
  return { commit, root: dir };
}

/**
 * The node flags `npm start` runs the gateway with in the checkout at `root` (its package.json's start
 * script, between `node` and `dist/src/main.js`): the bench measures the gateway as it ships.
 */
export function startFlags(root) {
  const script = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts?.start ?? '';
  const m = /\bnode((?:\s+--?[\w-]+(?:=\S+)?)*)\s+dist\/src\/main\.js/.exec(script);
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : [];
}

/** The configuration file of this build's gateways, made on first use. */
let benchConfigFile = null;

/**
 * Starts a gateway on `simUrl` with a funded account (and CFG.accounts - 1 more) whose limits are out
 * of reach; `root` is the checkout whose build runs (this one, or a baseline's).
 */
export async function startGateway(label, simUrl, store, nodeFlags = [], extraEnv = {}, root = ROOT) {
  const port = await freePort();
  const providers = root === ROOT ? PROVIDERS : providersOf(root);
  const env = cleanEnv({
    PORT: String(port), GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_DATA_DIR: ':memory:',
    ...providersOn(simUrl, providers),
    ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
    // This build's gateways run the project's configuration less the signing providers (variants.mjs).
    ...(root === ROOT ? { GATEWAY_CONFIG: (benchConfigFile ??= benchConfig()) } : {}),
    ...extraEnv,
  });
  const proc = await startProcess(label, [...startFlags(root), ...nodeFlags, 'dist/src/main.js'], { env, cwd: root, ready: /gateway listening on/ });
  // The start line names each provider, live (with its base URL's host) or simulated: every one must be
  // live on the bench's simulator, or the gateway would carry a simulator of its own in the measured
  // process. (A baseline older than that line only names a simulator it started.)
  const host = new URL(simUrl).host;
  for (const provider of providers.map((p) => p.id)) {
    const live = root === ROOT ? proc.output().includes(`${provider} live (${host})`) : !/simulator http/.test(proc.output());
    if (!live) throw new Error(`${label}: ${provider} is not live on ${simUrl}; start line:\n${proc.output()}`);
  }
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
  return { kind: 'gateway', label, url, pid: proc.pid, key: account.key, accountId: account.id, extraKeys, proc, rssStartMb: memoryOf(proc.pid).rssMb, mallocStartMb: mallocHeapMbOf(proc.pid) };
}

const PORTKEY_DIR = join(BENCH_DIR, '.portkey');
const PORTKEY_ENTRY = join(PORTKEY_DIR, 'node_modules/@portkey-ai/gateway/build/start-server.js');

/** Installs the Portkey gateway into bench/.portkey/ unless the wanted version is there. */
export function ensurePortkey() {
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
  const r = spawnSync(NPM, ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PORTKEY_DIR, stdio: 'inherit', env: cleanEnv({}) });
  if (r.status !== 0 || !existsSync(PORTKEY_ENTRY)) throw new Error(`npm install in ${PORTKEY_DIR} failed (status ${r.status})`);
}

/** Starts the Portkey gateway; the simulator URL goes in each request's headers. */
export async function startPortkey(simUrl) {
  const port = await freePort();
  const proc = await startProcess('portkey', [PORTKEY_ENTRY, `--port=${port}`, '--headless'], {
    cwd: PORTKEY_DIR, env: cleanEnv({ NODE_ENV: 'production' }), ready: /Ready for connections/,
  });
  const version = JSON.parse(readFileSync(join(PORTKEY_DIR, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')).version;
  const nodeServer = JSON.parse(readFileSync(join(PORTKEY_DIR, 'node_modules/@hono/node-server/package.json'), 'utf8')).version;
  return { kind: 'portkey', label: `Portkey ${version}`, url: `http://127.0.0.1:${port}`, pid: proc.pid, simUrl, proc, version, nodeServer, rssStartMb: memoryOf(proc.pid).rssMb, mallocStartMb: mallocHeapMbOf(proc.pid) };
}

/** Starts the floor proxy (bench/floor-proxy.mjs): node:http and an undici pool in front of the simulator, nothing else. */
export async function startFloor(simUrl) {
  const port = await freePort();
  const proc = await startProcess('floor proxy', [join(BENCH_DIR, 'floor-proxy.mjs')], {
    env: cleanEnv({ FLOOR_UPSTREAM: simUrl, FLOOR_PORT: String(port) }), ready: /floor proxy listening/,
  });
  return { kind: 'floor', label: 'Floor proxy (node:http + undici)', url: `http://127.0.0.1:${port}`, pid: proc.pid, proc, rssStartMb: memoryOf(proc.pid).rssMb, mallocStartMb: mallocHeapMbOf(proc.pid) };
}
