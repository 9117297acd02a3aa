/**
 * CLI entry of the simulator: `node dist/src/sim/main.js`. Environment: SIM_PORT (default 8089),
 * SIM_HOST (default 127.0.0.1), SIM_LATENCY_MS (optional fixed latency per answer).
 */
import { startSimulator } from './server.js';

function envInt(name: string, fallback: number | undefined): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** Starts the simulator from the environment and stops it on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const sim = await startSimulator({
    port: envInt('SIM_PORT', 8089),
    host: process.env.SIM_HOST || '127.0.0.1',
    latencyMs: envInt('SIM_LATENCY_MS', undefined),
  });
  console.log(`simulator listening on ${sim.url} (faults: POST /__sim/faults)`);
  const stop = () => { sim.close().then(() => process.exit(0), () => process.exit(1)); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
