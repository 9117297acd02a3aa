/**
 * Money under concurrency (issue 2): 200 concurrent requests against a balance that pays for about
 * 50. The balance never passes -credit_limit, the conservation invariant holds exactly, and a 402
 * never reached the upstream. A sequential run where every request fits gets no 402 at all.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { holdAmount } from '../../src/billing/pricing.js';
import { countChatPromptTokens } from '../../src/tokenize.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, settled, type Account } from '../helpers/chat.js';

const MESSAGES = [{ role: 'user', content: 'concurrency' }];
const MAX_TOKENS = 16;

describeStore('money under concurrency', () => {
  let t: TestGateway;
  let holdNano: bigint;

  beforeAll(async () => {
    t = await startTestGateway();
    const offering = t.gw.generation().gateway.offerings.get('gpt-4o-mini')!;
    holdNano = holdAmount(countChatPromptTokens(MESSAGES), MAX_TOKENS, 10n, offering);
  });
  afterAll(async () => { await t?.dispose(); });

  it('200 concurrent requests against a balance for ~50: no overspend, exact conservation, no 402 upstream', async () => {
    const creditLimit = 1_000n;
    const balance = holdNano * 50n;
    const { id } = await t.gw.runtime.ledger.createAccount({ balanceNano: balance, creditLimitNano: creditLimit });
    const a: Account = { id, key: (await t.gw.runtime.ledger.createKey(id)).key, t };
    const upstreamBefore = t.sim.requests;

    const statuses = await Promise.all(Array.from({ length: 200 }, () =>
      postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: MAX_TOKENS }).then(async (r) => { await r.arrayBuffer(); return r.status; })));

    const ok = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 402).length;
    expect(ok + refused).toBe(200);
    expect(ok).toBeGreaterThanOrEqual(50);
    expect(refused).toBeGreaterThan(0);
    // Every admitted request reached the upstream once; no refused one did.
    expect(t.sim.requests - upstreamBefore).toBe(ok);

    const after = await settled(a);
    expect(after.balanceNano).toBeGreaterThanOrEqual(-creditLimit);
    expect(after.rows).toBe(ok);
    const line = (await t.gw.runtime.ledger.reconcile()).find((l) => l.accountId === id)!;
    expect(line.differenceNano).toBe(0n);
    expect(line.openHoldsNano).toBe(0n);
    expect(line.openingNano - line.balanceNano).toBe(line.usageNano);
  });

  it('a sequential run where every request fits gets no 402', async () => {
    const { id } = await t.gw.runtime.ledger.createAccount({ balanceNano: holdNano * 30n });
    const a: Account = { id, key: (await t.gw.runtime.ledger.createKey(id)).key, t };
    for (let i = 0; i < 30; i++) {
      const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: MAX_TOKENS });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
    const line = (await t.gw.runtime.ledger.reconcile()).find((l) => l.accountId === id)!;
    expect(line.differenceNano).toBe(0n);
  });
});
