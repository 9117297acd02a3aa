/**
 * Starts a real gateway for a test: fastify on a free port, the built-in simulator as upstream, and
 * the store of the vitest project (in-memory PGlite, or a fresh PostgreSQL database).
 */
import { request } from 'undici';
import { startGateway, type GatewayOptions, type LogFn, type RunningGateway } from '../../src/boot.js';
import { parseUsd } from '../../src/money.js';
import { asUserSees, type AccountView } from '../../src/ledger/types.js';
import type { Simulator } from '../../src/sim/server.js';
import type { Clock } from '../../src/clock.js';
import type { Resolver } from '../../src/upstream/fetch/index.js';
import { memoryTemplate, openTestDb, storeKind } from './db.js';

/** The admin token every test gateway is started with. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A started test gateway and helpers around it. */
export interface TestGateway {
  gw: RunningGateway;
  url: string;
  sim: Simulator;
  /** Creates an account with a key through the ledger. */
  account(balanceUsd: string, creditLimitUsd?: string): Promise<{ id: string; key: string }>;
  /**
   * The account once every charge answered on a credit grant is posted (issue 30), its grants counted
   * as its own: the balance as if each request had reserved and settled alone (what they left unspent
   * is back in it; a request still in flight on a grant is held, as its reserve would be), the holds
   * without the grants. What a test of exact charges compares.
   */
  settled(accountId: string): Promise<AccountView>;
  /** The account's usage rows once every charge answered on a credit grant is posted (issue 30: posted behind the answer). */
  usage(accountId: string, opts?: Parameters<RunningGateway['runtime']['ledger']['listUsage']>[1]): ReturnType<RunningGateway['runtime']['ledger']['listUsage']>;
  /** Sets a simulator fault (POST /__sim/faults). */
  fault(fault: Record<string, unknown>, model?: string): Promise<void>;
  /** Clears simulator faults. */
  clearFaults(): Promise<void>;
  dispose(): Promise<void>;
}

/** Boots a gateway with the project's manifests (or `configFile`) and test-friendly settings. */
export async function startTestGateway(opts: { configFile?: string; env?: Record<string, string>; watch?: boolean; log?: LogFn; clock?: Clock; resolver?: Resolver; logDestination?: GatewayOptions['logDestination'] } = {}): Promise<TestGateway> {
  // PostgreSQL tests give the gateway a brand-new database; PGlite tests run it on its own in-memory
  // store (GATEWAY_DATA_DIR), which the gateway creates from the run's migrated template. Opening a test
  // PGlite here as well cost a second PGlite start (about 2.5 s) per gateway, only to close it again.
  const store = storeKind === 'postgres' ? await openTestDb() : null;
  const env: Record<string, string> = {
    PORT: '0', SIM_PORT: '0', GATEWAY_DATA_DIR: ':memory:', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'silent',
    ...(store?.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
    // The vitest project `immediate` runs the billing tests with billing.grants.post: immediate.
    ...(process.env.GATEWAY_GRANTS_POST ? { GATEWAY_GRANTS_POST: process.env.GATEWAY_GRANTS_POST } : {}),
    ...opts.env,
  };
  let gw: RunningGateway;
  try {
    gw = await startGateway({ env, configFile: opts.configFile, watch: opts.watch, log: opts.log, clock: opts.clock, resolver: opts.resolver, logDestination: opts.logDestination, memoryTemplate: store ? undefined : await memoryTemplate() });
  } catch (error) {
    await store?.dispose(); // a gateway that failed to start leaves no test database behind
    throw error;
  }
  const sim = gw.simulator!;
  const simCall = async (method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<void> => {
    const res = await request(`${sim.url}${path}`, { method, body: body ? JSON.stringify(body) : undefined, headers: { 'content-type': 'application/json' } });
    await res.body.text();
    if (res.statusCode >= 300) throw new Error(`simulator ${path} answered ${res.statusCode}`);
  };
  return {
    gw, url: gw.url, sim,
    async account(balanceUsd, creditLimitUsd = '0') {
      const { id } = await gw.runtime.ledger.createAccount({ balanceNano: parseUsd(balanceUsd), creditLimitNano: parseUsd(creditLimitUsd) });
      const { key } = await gw.runtime.ledger.createKey(id);
      return { id, key };
    },
    async settled(accountId) {
      // A request in flight on a grant holds its quote in memory: counted as the hold it would be alone.
      // Read before posting: one that finishes meanwhile is still counted in flight (the caller asks again).
      const grant = gw.runtime.grants?.book.grantOf(accountId);
      const inflight = { nano: grant?.inflightNano ?? 0n, draws: grant?.draws ?? 0 };
      await gw.postGrants();
      const view = await gw.runtime.ledger.getAccount(accountId);
      if (!view) throw new Error(`account ${accountId} not found`);
      const seen = asUserSees(view);
      return { ...seen, balanceNano: seen.balanceNano - inflight.nano, heldNano: seen.heldNano + inflight.nano, openHolds: seen.openHolds + inflight.draws };
    },
    async usage(accountId, listOpts) {
      await gw.postGrants();
      return gw.runtime.ledger.listUsage(accountId, listOpts);
    },
    fault: (fault, model) => simCall('POST', '/__sim/faults', { ...(model ? { model } : {}), fault }),
    clearFaults: () => simCall('DELETE', '/__sim/faults'),
    async dispose() {
      await gw.close();
      await store?.dispose();
    },
  };
}
