/**
 * Chat completions' `n` (issue 31, the simulator's n): the vendor bills the output of every choice, so
 * the reservation covers `n` times the output cap. Before, it reserved for one answer, and an `n: 3`
 * request could settle at three times what was held. An account that can hold one answer's worst case
 * but not three gets a 402 for `n: 3` (nothing charged) and is served for `n: 1`; `n: 2` is billed
 * the output of both choices, within its hold.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describeStore('chat n: the hold covers every choice', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  // gpt-4o-mini: 1,000 output tokens at $0.60 per 1M = $0.0006 each; the account holds $0.001.
  const ask = (client: OpenAI, n: number) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1000, n });

  it('refuses n: 3 when only one answer fits the balance, and serves n: 1', async () => {
    const account = await t.account('0.001');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const refused = await ask(client, 3).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((await t.settled(account.id))!.balanceNano).toBe(1_000_000n);
    const served = await ask(client, 1);
    expect(served.choices).toHaveLength(1);
  });

  it('bills n: 2 the output of both choices', async () => {
    const account = await t.account('1');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const one = await ask(client, 1);
    const two = await ask(client, 2);
    expect(two.choices).toHaveLength(2);
    expect(two.usage!.completion_tokens).toBe(2 * one.usage!.completion_tokens);
    await t.settled(account.id);
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(row!.details).toMatchObject({ output: two.usage!.completion_tokens });
  });
});
