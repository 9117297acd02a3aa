/**
 * A finished stream reads the upstream body to its end, so the upstream connection goes back to the
 * pool: destroying the body after the last event aborted the request, and when the end of the HTTP
 * framing came in a later packet (end_delay_ms) the connection was closed and every stream paid for
 * a new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { postChat, readSse, type Account } from '../../helpers/chat.js';

describe('streaming forward: upstream connections', () => {
  let t: TestGateway;
  let a: Account;

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('1')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  it('reuses one upstream connection for streams sent one after another, even when the body ends after the last event', async () => {
    await t.fault({ end_delay_ms: 30 });
    const before = t.sim.connections;
    for (let i = 0; i < 5; i++) {
      const res = await postChat(a, { model: 'gpt-4o-mini', stream: true, max_tokens: 8, messages: [{ role: 'user', content: `stream ${i}` }] });
      expect(res.status).toBe(200);
      expect((await readSse(res)).done).toBe(true);
    }
    expect(t.sim.requests).toBeGreaterThanOrEqual(5);
    expect(t.sim.connections - before).toBe(1);
    await t.clearFaults();
  });
});
