/** Helpers for the routing tests (issue 29): scenario offerings, the simulator's request log, conservation. */
import { expect } from 'vitest';
import { request } from 'undici';
import type { ConfigCopy } from './config.js';
import type { TestGateway } from './gateway.js';

/** One request the simulator received (GET /__sim/requests). */
export interface SimRequest { at_ms: number; path: string; model: string | null; key: string | null; stream: boolean; last_role: string | null; status: number | null; traceparent?: string }

/** The simulator's requests for one upstream model, in arrival order. */
export async function simRequests(t: TestGateway, model: string): Promise<SimRequest[]> {
  const res = await request(`${t.sim.url}/__sim/requests?model=${encodeURIComponent(model)}`);
  const body = await res.body.json() as { data: SimRequest[] };
  return body.data;
}

/** A chat offering for providers/openai.yaml, priced like gpt-4o-mini unless `prices` say otherwise; `extra` adds routing keys. */
export function chatOffering(id: string, extra: Record<string, unknown> = {}, prices = { input: '0.15', output: '0.60' }): Record<string, unknown> {
  return {
    id, service_type: 'CHAT', availability: 'available', max_output_tokens: 16384, context_window: 128000,
    billing: { unit: 'token', per: 1000000, prices }, ...extra,
  };
}

/** Adds offerings to the copy's providers/openai.yaml. */
export async function addOpenaiOfferings(copy: ConfigCopy, offerings: Array<Record<string, unknown>>): Promise<void> {
  await copy.editYaml('providers/openai.yaml', (doc) => { doc.offerings.push(...offerings); });
}

/**
 * Conservation for one account once its holds are closed (DESIGN.md's invariant, issue 29): the
 * opening balance is the balance plus what is held plus the usage charged. Returns the usage rows.
 */
export async function expectConserved(t: TestGateway, accountId: string, openingNano: bigint): Promise<Array<{ model: string; amountNano: bigint; deployment?: string | null; details: Record<string, unknown> }>> {
  const ledger = t.gw.runtime.ledger;
  let account = await t.settled(accountId);
  for (let i = 0; i < 100 && account.openHolds > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    account = await t.settled(accountId);
  }
  expect(account.openHolds).toBe(0);
  const usage = [];
  for (let page = await ledger.listUsage(accountId, { limit: 500 }); ; page = await ledger.listUsage(accountId, { limit: 500, after: page.next! })) {
    usage.push(...page.data);
    if (!page.next) break;
  }
  const charged = usage.reduce((sum, row) => sum + row.amountNano, 0n);
  expect(account.balanceNano + account.heldNano + charged).toBe(openingNano);
  return usage;
}
