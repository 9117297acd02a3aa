/**
 * The conformance suite (issue 9 point 6; DESIGN.md "Tests that count"): every provider operation a
 * route can call goes through the same cases against the simulator, with real HTTP end to end:
 *  - success: 200; a billable route settles a charge and leaves nothing held;
 *  - an upstream 4xx: the client's 400, nothing charged;
 *  - an upstream 429: 429 `upstream_rate_limited`, nothing charged;
 *  - an upstream 5xx: 502, nothing charged;
 *  - a timeout (headers later than the provider's `headers_ms`): 504, nothing charged;
 *  - a malformed answer: 502, nothing charged (opted out where the simulator's format has no
 *    malformed JSON answer: the chat formats break mid-stream instead, covered by test/e2e/faults*).
 * A job route's success is its accepted job, which owns the request's hold (the poller settles it).
 * Each route needs a canonical request in test/conformance/requests/<route id>.json (`model` is added
 * per operation; `$files` sends it as a multipart form with those fixture files); a route without one fails the suite. One offering per route and operation.
 */
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledOffering, CompiledRoute } from '../../src/config/types.js';
import { projectRoot } from '../../src/paths.js';
import { chooseUpstream } from '../../src/pipeline/upstream-choice.js';
import { copyConfig } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** Operations whose simulator has no malformed JSON answer (their formats break mid-stream instead). */
const NO_MALFORMED_ANSWER = new Set(['chat-completions', 'responses', 'messages', 'count-tokens']);
/** The providers' answer deadline in this suite, and a latency past it. */
const HEADERS_MS = 400;
const LATE_MS = 1500;

interface Case { route: CompiledRoute; operation: string; offering: CompiledOffering; body: Record<string, unknown>; headers: Record<string, string>; polled: boolean }

let t: TestGateway;
const cases: Case[] = [];
const missing: string[] = [];

beforeAll(async () => {
  const copy = await copyConfig();
  for (const file of readdirSync(join(copy.dir, 'providers')).filter((f) => f.endsWith('.yaml'))) {
    await copy.editYaml(`providers/${file}`, (d) => { d.timeouts = { ...(d.timeouts ?? {}), headers_ms: HEADERS_MS }; });
  }
  t = await startTestGateway({ configFile: copy.configFile });
  const gateway = t.gw.generation().gateway;
  for (const route of gateway.routes.filter((r) => r.manifest.handler === 'proxy')) {
    const file = join(projectRoot(), 'test/conformance/requests', `${route.manifest.id}.json`);
    if (!existsSync(file)) { missing.push(route.manifest.id); continue; }
    const seen = new Set<string>();
    for (const offering of gateway.offerings.values()) {
      const provider = gateway.providers.get(offering.providerId)!;
      const upstream = offering.enabled && offering.availability === 'available' && route.serviceTypes.has(offering.serviceType) ? chooseUpstream(route, offering, provider) : null;
      const key = `${provider.id}/${upstream?.operation}`;
      if (!upstream || seen.has(key)) continue;
      seen.add(key);
      const headers = Object.fromEntries(route.requiredHeaders.map((h) => [h.name, [...h.values][0]!]));
      const polled = provider.operations[upstream.operation]!.poll !== null;
      cases.push({ route, operation: key, offering, body: { ...JSON.parse(readFileSync(file, 'utf8')), model: offering.id }, headers, polled });
    }
  }
}, 60_000);
afterAll(async () => { await t?.dispose(); });

/**
 * A multipart route's request (spec 4.8 audio): `$files` in the canonical request names each file
 * part's fixture under test/fixtures/files; the other fields are text fields.
 */
function formOf(body: Record<string, unknown>): FormData {
  const { $files, ...fields } = body as { $files: Record<string, { fixture: string; type: string }> };
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  for (const [name, f] of Object.entries($files)) {
    form.append(name, new Blob([new Uint8Array(readFileSync(join(projectRoot(), 'test/fixtures/files', f.fixture)))], { type: f.type }), f.fixture);
  }
  return form;
}

async function send(c: Case, key: string): Promise<{ status: number; body: any }> {
  const multipart = c.body.$files !== undefined;
  const res = await fetch(`${t.url}${c.route.manifest.path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, ...(multipart ? {} : { 'content-type': 'application/json' }), ...c.headers },
    body: multipart ? formOf(c.body) : JSON.stringify(c.body),
  });
  const text = await res.text();
  // A binary answer (an MP3 of the speech and sound-effects routes) is not JSON: its type stands for it.
  if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return { status: res.status, body: res.headers.get('content-type') };
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Runs one failure case: the fault, the expected status, and nothing charged. */
async function failure(c: Case, fault: Record<string, unknown>, status: number, times = 1): Promise<void> {
  const account = await t.account('5');
  await t.fault({ ...fault, times });
  try {
    const answer = await send(c, account.key);
    expect(answer.status, `${c.route.manifest.id} via ${c.operation}: ${JSON.stringify(answer.body)}`).toBe(status);
    expect(await t.gw.runtime.ledger.getAccount(account.id)).toMatchObject({ balanceNano: 5_000_000_000n, heldNano: 0n, openHolds: 0 });
    expect((await t.gw.runtime.ledger.listUsage(account.id)).data).toEqual([]);
  } finally {
    await t.clearFaults();
  }
}

describe('conformance', () => {
  it('has a canonical request for every proxy route, and finds operations to run', () => {
    expect(missing).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });

  it('success: 200, billed and settled', async () => {
    for (const c of cases) {
      const account = await t.account('5');
      const answer = await send(c, account.key);
      expect(answer.status, `${c.route.manifest.id} via ${c.operation}: ${JSON.stringify(answer.body)}`).toBe(200);
      const view = await t.gw.runtime.ledger.getAccount(account.id);
      const rows = (await t.gw.runtime.ledger.listUsage(account.id)).data;
      // A job route (spec 4.16): the accepted job owns the hold; the poller bills it (test/e2e/videos.test.ts).
      if (c.route.manifest.job) {
        expect([view!.openHolds, rows.length, answer.body.status], c.operation).toEqual([1, 0, 'queued']);
        continue;
      }
      expect(view).toMatchObject({ heldNano: 0n, openHolds: 0 });
      if (c.route.billable) {
        expect(rows.length, c.operation).toBeGreaterThan(0);
        expect(view!.balanceNano).toBe(5_000_000_000n - rows.reduce((sum, r) => sum + r.amountNano, 0n));
      } else {
        expect(rows).toEqual([]);
      }
    }
  });

  it('an upstream 4xx is the client\'s 400, nothing charged', async () => {
    for (const c of cases) await failure(c, { status: 400 }, 400);
  });

  it('an upstream 429 is 429 upstream_rate_limited, nothing charged', async () => {
    for (const c of cases) await failure(c, { status: 429 }, 429);
  });

  it('an upstream 5xx is 502, nothing charged', async () => {
    for (const c of cases) await failure(c, { status: 503 }, 502);
  });

  it('an upstream past its answer deadline is 504, nothing charged', async () => {
    for (const c of cases) await failure(c, { latency_ms: LATE_MS }, 504);
  });

  it('a malformed answer is 502, nothing charged', async () => {
    // A polled operation's first answer is a 202 with no body: its malformed answer is the first poll's.
    for (const c of cases.filter((x) => !NO_MALFORMED_ANSWER.has(x.route.manifest.id))) await failure(c, { error_after_chunks: 1 }, 502, c.polled ? 2 : 1);
  });
});
