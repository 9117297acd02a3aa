/**
 * `npm start`: serves the gateway (PORT, default 8080) on the embedded store unless DATABASE_URL
 * is set, with the built-in simulator for providers without credentials. `--watch` or
 * GATEWAY_WATCH=1 reloads the manifests on change.
 */
import { startGateway } from './boot.js';
import { ManifestError } from './config/errors.js';
import { parseUsd } from './money.js';
import { startupLine } from './server/startup.js';
import { StoreLockedError } from './store/lock.js';

async function createDemoAccount(gateway: Awaited<ReturnType<typeof startGateway>>): Promise<void> {
  const [row] = await gateway.db.query<{ n: string }>('SELECT count(*)::text AS n FROM accounts');
  if (row && row.n !== '0') return;
  const account = await gateway.runtime.ledger.createAccount({ balanceNano: parseUsd('10') });
  const key = await gateway.runtime.ledger.createKey(account.id);
  process.stdout.write(`\nDemo account ${account.id} created with a $10 balance. Its key, shown only this once:\n\n    ${key.key}\n\n`);
}

async function main(): Promise<void> {
  const watch = process.argv.includes('--watch') || process.env.GATEWAY_WATCH === '1';
  const gateway = await startGateway({ watch });
  if (!process.env.DATABASE_URL) await createDemoAccount(gateway);
  const simulator = gateway.simulator ? ` simulator ${gateway.simulator.url} (faults: POST ${gateway.simulator.url}/__sim/faults)` : '';
  // One start line: where it listens and what it runs on (store, limiter, admin API, each provider).
  process.stdout.write(`gateway listening on ${gateway.url}${simulator}${watch ? ' (watching manifests)' : ''} · ${startupLine(gateway.facts())}\n`);
  // SIGTERM drains: requests and streams in flight finish (up to GATEWAY_DRAIN_SECONDS, default 30) and settle.
  const deadlineMs = Number(process.env.GATEWAY_DRAIN_SECONDS ?? 30) * 1000;
  const stop = async (): Promise<void> => {
    await gateway.drain(Number.isFinite(deadlineMs) && deadlineMs >= 0 ? deadlineMs : 30_000);
    process.stdout.write('gateway stopped\n');
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  if (error instanceof ManifestError) process.stderr.write(`invalid configuration: ${error.message}\n`);
  // The message names the folder and the holder's PID; a stack would only bury it.
  else if (error instanceof StoreLockedError) process.stderr.write(`gateway failed to start: ${error.message}\n`);
  else process.stderr.write(`gateway failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
