/**
 * What the client-library tests share (issue 31): one real gateway per file on a free port with the
 * built-in simulator as every vendor, a funded account, the account's usage rows read through the
 * admin API, the last request the simulator received, and the token prices of providers/*.yaml.
 */
import { divideRounded, formatUsd, parseUsd } from '../../src/money.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** A started gateway and one funded account on it. */
export interface ClientsGateway {
  t: TestGateway;
  url: string;
  account: { id: string; key: string };
  dispose(): Promise<void>;
}

/** Boots the gateway (simulator upstream) and funds an account with `balanceUsd`. */
export async function startClientsGateway(opts: { balanceUsd?: string; env?: Record<string, string> } = {}): Promise<ClientsGateway> {
  const t = await startTestGateway({ env: opts.env });
  const account = await t.account(opts.balanceUsd ?? '20');
  return { t, url: t.url, account, dispose: () => t.dispose() };
}

/** One usage row as `GET /admin/accounts/{id}/usage` lists it. */
export interface AdminUsageRow {
  id: string;
  request_id: string | null;
  model: string | null;
  kind: string;
  quantity: number;
  unit: string;
  amount_usd: string;
  details: Record<string, unknown>;
}

/**
 * The account's newest usage rows through the admin API (newest first). Charges answered on a credit
 * grant are posted behind the answer (issue 30): they are posted first, so every answered call has its row.
 */
export async function adminUsage(g: ClientsGateway, limit = 500): Promise<AdminUsageRow[]> {
  await g.t.gw.postGrants();
  const res = await fetch(`${g.url}/admin/accounts/${g.account.id}/usage?limit=${limit}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (res.status !== 200) throw new Error(`admin usage answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: AdminUsageRow[] }).data;
}

/** The rows added since `before` (the rows adminUsage listed earlier), newest first. */
export async function newRows(g: ClientsGateway, before: AdminUsageRow[]): Promise<AdminUsageRow[]> {
  const seen = new Set(before.map((r) => r.id));
  return (await adminUsage(g)).filter((r) => !seen.has(r.id));
}

/** The last request the simulator received (path, headers, parsed body). */
export async function lastUpstream(g: ClientsGateway): Promise<{ method: string; path: string; headers: Record<string, string>; body: any }> {
  return (await fetch(`${g.t.sim.url}/__sim/last`)).json() as Promise<{ method: string; path: string; headers: Record<string, string>; body: any }>;
}

/** USD per 1M tokens, as in providers/*.yaml. */
const PRICES: Record<string, { input: string; output: string; cached?: string; cacheWrite?: string }> = {
  'gpt-4o-mini': { input: '0.15', output: '0.60', cached: '0.075' },
  'gpt-4o': { input: '2.50', output: '10.00', cached: '1.25' },
  'claude-sonnet-4-5': { input: '3', output: '15', cached: '0.30', cacheWrite: '3.75' },
  'claude-haiku-4-5': { input: '1', output: '5', cached: '0.10', cacheWrite: '1.25' },
  'text-embedding-3-small': { input: '0.02', output: '0' },
  'embed-pro': { input: '0.12', output: '0' },
};

/**
 * The charge of a token request as the admin API prints it (decimal USD):
 * `input` counts every prompt token (cached ones included), priced once and rounded half up once.
 */
export function tokenChargeUsd(model: string, u: { input: number; output: number; cached?: number; cacheWrite?: number }): string {
  const p = PRICES[model];
  if (!p) throw new Error(`no price for ${model} in test/clients/harness.ts`);
  const cached = u.cached ?? 0;
  const write = u.cacheWrite ?? 0;
  const exact = BigInt(u.input - cached - write) * parseUsd(p.input) + BigInt(u.output) * parseUsd(p.output)
    + BigInt(cached) * parseUsd(p.cached ?? p.input) + BigInt(write) * parseUsd(p.cacheWrite ?? p.input);
  return formatUsd(divideRounded(exact, 1_000_000n));
}
