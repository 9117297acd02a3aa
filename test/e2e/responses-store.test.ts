/**
 * Issue 31 item 3, stored responses, with the official openai SDK on both stores: `store` (default
 * true) keeps a translated model's response for its account; retrieve, input_items (paged), delete;
 * previous_response_id rebuilds the conversation for the upstream and is billed as it reports;
 * another account's id is 404 (and 400 as a previous_response_id), nothing charged; a response past
 * responses.store_ttl_seconds is gone at once and deleted by the sweep (the clock is moved by hand).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { describeStore } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settled, type Account } from '../helpers/chat.js';

describeStore('stored responses', () => {
  const clock = new ManualClock();
  let t: TestGateway;
  let a: Account;
  let b: Account;
  let client: OpenAI;
  let other: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway({ clock });
    a = { ...(await t.account('5')), t };
    b = { ...(await t.account('5')), t };
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    other = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: b.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const lastUpstream = async (): Promise<{ path: string; body: { messages: Array<{ role: string; content: unknown }> } }> =>
    fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ path: string; body: { messages: Array<{ role: string; content: unknown }> } }>);

  for (const model of ['claude-sonnet-4-5', 'gpt-4o-mini']) {
    it(`keeps a response of ${model}, lists its input, chains a second turn and deletes it`, async () => {
      const first = await client.responses.create({ model, input: 'My name is Ada.' });
      expect(first).toMatchObject({ store: true });
      expect(await client.responses.retrieve(first.id)).toEqual(JSON.parse(JSON.stringify(first)) as unknown);
      const items = await client.responses.inputItems.list(first.id);
      expect(items.data).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'My name is Ada.' }] }]);

      const before = await settled(a);
      const second = await client.responses.create({ model, input: 'What is my name?', previous_response_id: first.id });
      expect(second.previous_response_id).toBe(first.id);
      const sent = (await lastUpstream()).body.messages;
      expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(JSON.stringify(sent[1]!.content)).toContain(first.output_text);
      // Billed as the upstream reported the whole conversation.
      const after = await settled(a);
      expect(after.rows).toBe(before.rows + 1);
      expect(after.last?.details).toMatchObject({ input: second.usage!.input_tokens, output: second.usage!.output_tokens });
      expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
      // input_items of the second turn are its own input only.
      expect((await client.responses.inputItems.list(second.id)).data.map((i) => i.type)).toEqual(['message']);

      await client.responses.delete(first.id);
      await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404, type: 'not_found_error' });
      await expect(client.responses.delete(first.id)).rejects.toMatchObject({ status: 404 });
      await expect(client.responses.create({ model, input: 'x', previous_response_id: first.id }))
        .rejects.toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    });
  }

  it('streams a stored response: the final Response is the one kept', async () => {
    const stream = client.responses.stream({ model: 'claude-sonnet-4-5', input: 'Stream and keep' });
    const final = await stream.finalResponse();
    const kept = await client.responses.retrieve(final.id);
    expect(kept).toMatchObject({ id: final.id, status: 'completed', usage: final.usage });
    expect(kept.output_text).toBe(final.output_text);
  });

  it('keeps nothing with store: false', async () => {
    const response = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'Forget me', store: false });
    expect(response).toMatchObject({ store: false });
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
  });

  it("answers another account's id as absent, nothing charged", async () => {
    const mine = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'Mine' });
    const before = await settled(b);
    await expect(other.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404, type: 'not_found_error' });
    await expect(other.responses.inputItems.list(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.create({ model: 'claude-sonnet-4-5', input: 'x', previous_response_id: mine.id }))
      .rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    expect(await settled(b)).toEqual(before);
    expect(await client.responses.retrieve(mine.id)).toMatchObject({ id: mine.id });
  });

  it("keeps a passthrough model's response at the vendor: chained, read, listed and deleted by its owner only", async () => {
    const first = await client.responses.create({ model: 'gpt-4o', input: 'My name is Ada.' });
    const second = await client.responses.create({ model: 'gpt-4o', input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    const sent = (await lastUpstream()) as unknown as { path: string; body: Record<string, unknown> };
    expect([sent.path, sent.body.previous_response_id, sent.body.input]).toEqual(['/v1/responses', first.id, 'What is my name?']);
    const before = await settled(b);
    await expect(other.responses.create({ model: 'gpt-4o', input: 'x', previous_response_id: first.id })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    // A passthrough id is no translated model's previous response, and the reverse.
    await expect(client.responses.create({ model: 'claude-sonnet-4-5', input: 'x', previous_response_id: first.id })).rejects.toMatchObject({ status: 400 });
    expect(await settled(b)).toEqual(before);
    // Read back from the vendor's store (the simulator keeps what it created), for its owner only.
    const upstreamBefore = (await lastUpstream()).path;
    await expect(other.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.delete(first.id)).rejects.toMatchObject({ status: 404 });
    expect((await lastUpstream()).path).toBe(upstreamBefore);
    expect(await client.responses.retrieve(first.id)).toMatchObject({ id: first.id, output_text: first.output_text, model: 'gpt-4o' });
    expect((await lastUpstream()).path).toBe(`/v1/responses/${first.id}`);
    const items = await client.responses.inputItems.list(first.id);
    expect(items.data).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'My name is Ada.' }] }]);
    expect(await client.responses.delete(first.id)).toMatchObject({ id: first.id, deleted: true });
    await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    expect(await settled(b)).toEqual(before);
  });

  it('pages input_items with limit, order and after', async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = ['one', 'two', 'three'].map((text) => ({ role: 'user' as const, content: text }));
    const response = await client.responses.create({ model: 'gpt-4o-mini', input });
    const texts = (page: OpenAI.Responses.ResponseItem[]): string[] => page.map((i) => ((i as { content: Array<{ text: string }> }).content[0]!.text));
    const newest = await client.responses.inputItems.list(response.id, { limit: 2 });
    expect([texts(newest.data), newest.has_more]).toEqual([['three', 'two'], true]);
    const rest = await client.responses.inputItems.list(response.id, { limit: 2, after: newest.data[1]!.id });
    expect([texts(rest.data), rest.has_more]).toEqual([['one'], false]);
    const oldest = await client.responses.inputItems.list(response.id, { order: 'asc' });
    expect(texts(oldest.data)).toEqual(['one', 'two', 'three']);
    const bad = await fetch(`${t.url}/v1/responses/${response.id}/input_items?limit=500`, { headers: { authorization: `Bearer ${a.key}` } });
    expect([bad.status, ((await bad.json()) as { error: { param: string } }).error.param]).toEqual([400, 'limit']);
  });

  it('forgets a response past responses.store_ttl_seconds; the sweep deletes it', async () => {
    const kept = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'Short-lived' });
    clock.advance(2_592_000 * 1000 + 1000);
    await expect(client.responses.retrieve(kept.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.create({ model: 'claude-sonnet-4-5', input: 'x', previous_response_id: kept.id })).rejects.toMatchObject({ status: 400 });
    const run = await fetch(`${t.url}/admin/jobs/responses-sweep/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const report = (await run.json()) as { ran: boolean; result: { responses_expired: number } };
    expect(report.ran).toBe(true);
    expect(report.result.responses_expired).toBeGreaterThanOrEqual(1);
    const left = await t.gw.db.query<{ n: number }>('SELECT count(*)::int AS n FROM stored_responses WHERE id = $1', [kept.id]);
    expect(left[0]!.n).toBe(0);
  });
});
