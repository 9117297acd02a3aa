/**
 * A stream that outlives its reservation's lifetime keeps its hold alive while it runs: the sweeper
 * never releases a request in flight, so the final charge is settled against its own hold.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, readSse, settled, type Account } from '../helpers/chat.js';

describeStore('long streams and the hold sweeper', () => {
  let t: TestGateway;
  let a: Account;

  beforeAll(async () => {
    t = await startTestGateway({ env: { GATEWAY_HOLD_TTL_SECONDS: '1', GATEWAY_SWEEP_INTERVAL_SECONDS: '1' } });
    a = { ...(await t.account('1')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  it('settles a 3-second stream against its own hold with a 1-second hold lifetime', async () => {
    // answer_words: a 60-word answer (the simulator's natural one is shorter), 3 s at 50 ms a chunk.
    await t.fault({ chunk_delay_ms: 50, answer_words: 60, times: 1 });
    const res = await postChat(a, { model: 'gpt-4o-mini', stream: true, max_tokens: 60, messages: [{ role: 'user', content: 'a long stream' }] });
    const requestId = res.headers.get('x-request-id')!;
    const { done } = await readSse(res);
    expect(done).toBe(true);
    await settled(a);
    const [hold] = await t.gw.db.query<{ outcome: string }>('SELECT outcome FROM holds WHERE id = $1', [requestId]);
    expect(hold?.outcome).toBe('settled');
    const line = (await t.gw.runtime.ledger.reconcile()).find((l) => l.accountId === a.id)!;
    expect(line.differenceNano).toBe(0n);
  });
});
