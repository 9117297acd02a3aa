/**
 * The fault table (issue 2, item 11): what each upstream or client failure costs the client.
 * Failures before content: an error in the client's format and nothing charged. Content delivered
 * and then lost: input plus the output delivered, counted with the tokenizer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countChatPromptTokens, countTextTokens } from '../../src/tokenize.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { copyConfig, singleAttempt } from '../helpers/config.js';
import { chatPrice, postChat, readSse, settled, type Account } from '../helpers/chat.js';

const MESSAGES = [{ role: 'user', content: 'Tell me about faults' }];
const PROMPT_TOKENS = countChatPromptTokens(MESSAGES);

describeStore('fault table', () => {
  let t: TestGateway;
  let a: Account;

  beforeAll(async () => {
    const copy = await copyConfig();
    // Short header timeout so a slow upstream is a timeout within the test's patience.
    await copy.editYaml('providers/openai.yaml', (d) => { d.timeouts.headers_ms = 700; });
    // What one failed attempt costs: retries and fail-over are test/e2e/routing-*.test.ts.
    await singleAttempt(copy);
    t = await startTestGateway({ configFile: copy.configFile });
    a = { ...(await t.account('1')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  async function expectNothingCharged(run: () => Promise<void>): Promise<void> {
    const before = await settled(a);
    await run();
    const after = await settled(a);
    expect(after.balanceNano).toBe(before.balanceNano);
    expect(after.rows).toBe(before.rows);
  }

  for (const stream of [false, true]) {
    it(`upstream 5xx: 502 in the client format, nothing charged (stream: ${stream})`, async () => {
      await t.fault({ status: 500, times: 1 });
      await expectNothingCharged(async () => {
        const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream });
        expect(res.status).toBe(502);
        expect(await res.json()).toMatchObject({ error: { code: 'upstream_error', type: 'server_error' } });
      });
    });

    it(`upstream 429: 429 with retry-after kept, nothing charged (stream: ${stream})`, async () => {
      await t.fault({ status: 429, times: 1 });
      await expectNothingCharged(async () => {
        const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream });
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('7');
        expect(await res.json()).toMatchObject({ error: { code: 'upstream_rate_limited', type: 'rate_limit_error' } });
      });
    });
  }

  it('header timeout: 504, nothing charged', async () => {
    await t.fault({ latency_ms: 1500, times: 1 });
    await expectNothingCharged(async () => {
      const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES });
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ error: { code: 'upstream_timeout' } });
    });
  });

  it('error-only stream: an HTTP error, nothing charged', async () => {
    await t.fault({ error_after_chunks: 0, times: 1 });
    await expectNothingCharged(async () => {
      const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: { code: 'upstream_error' } });
    });
  });

  it('stream whose only event before the error is the role chunk: an HTTP error (nothing was sent), nothing charged', async () => {
    // Frames before the first content wait (issue 29 item 3): the client has seen nothing, so it gets a plain error.
    await t.fault({ error_after_chunks: 1, times: 1 });
    await expectNothingCharged(async () => {
      const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: { code: 'upstream_error' } });
    });
  });

  it('stream cut after content: input plus the delivered output, counted by the tokenizer', async () => {
    await t.fault({ truncate_after_chunks: 6, times: 1 });
    const before = await settled(a);
    const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
    const { text, errors, done } = await readSse(res);
    expect(done).toBe(false);
    expect(errors[0]).toMatchObject({ code: 'upstream_error' });
    expect(text.length).toBeGreaterThan(0);
    const after = await settled(a);
    const output = countTextTokens(text);
    expect(after.last?.details).toMatchObject({ input: PROMPT_TOKENS, output, counted_by: 'gateway_tokenizer' });
    expect(before.balanceNano - after.balanceNano).toBe(chatPrice(PROMPT_TOKENS, output));
  });

  for (const stream of [false, true]) {
    it(`complete answer without usage: input estimate plus tokenized output (stream: ${stream})`, async () => {
      const reference = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES }).then((r) => r.json() as Promise<{ usage: { prompt_tokens: number; completion_tokens: number } }>);
      await t.fault({ omit_usage: true, times: 1 });
      const before = await settled(a);
      const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream });
      expect(res.status).toBe(200);
      if (stream) expect((await readSse(res)).done).toBe(true); else await res.json();
      const after = await settled(a);
      // The simulator counts with the same tokenizer, so the gateway's count equals the real usage.
      expect(after.last?.details).toMatchObject({ input: reference.usage.prompt_tokens, output: reference.usage.completion_tokens, counted_by: 'gateway_tokenizer' });
      expect(before.balanceNano - after.balanceNano).toBe(chatPrice(reference.usage.prompt_tokens, reference.usage.completion_tokens));
    });
  }

  for (const stream of [false, true]) {
    it(`client that leaves before the first byte pays nothing (stream: ${stream})`, async () => {
      await t.fault({ latency_ms: 500, times: 1 });
      await expectNothingCharged(async () => {
        const abort = new AbortController();
        const pending = postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream }, abort.signal).catch((e: unknown) => e);
        await new Promise((r) => setTimeout(r, 150));
        abort.abort();
        expect(await pending).toBeInstanceOf(Error);
        await new Promise((r) => setTimeout(r, 600));
      });
    });
  }

  it('client that leaves mid-stream pays input plus the output delivered; the upstream is aborted', async () => {
    await t.fault({ chunk_delay_ms: 40, times: 1 });
    const before = await settled(a);
    const abort = new AbortController();
    const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, stream: true, max_tokens: 400 }, abort.signal);
    const { text } = await readSse(res, { stopAfterContentChunks: 5, abort });
    const after = await settled(a);
    const details = after.last!.details as { input: number; output: number; counted_by: string };
    expect(details.input).toBe(PROMPT_TOKENS);
    expect(details.counted_by).toBe('gateway_tokenizer');
    expect(details.output).toBeGreaterThanOrEqual(countTextTokens(text));
    expect(details.output).toBeLessThan(100);
    expect(before.balanceNano - after.balanceNano).toBe(chatPrice(PROMPT_TOKENS, details.output));
  });
});

describeStore('upstream connection refused', () => {
  it('503 in the client format, nothing charged', async () => {
    // A live (keyed) provider pointed at a port nothing listens on.
    const t = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-test-not-a-real-key', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    try {
      const a: Account = { ...(await t.account('1')), t };
      const before = await settled(a);
      const res = await postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES });
      expect(res.status).toBe(503);
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'upstream_unavailable', type: 'server_error' } });
      expect(body).not.toContain('sk-test');
      const after = await settled(a);
      expect(after.balanceNano).toBe(before.balanceNano);
      expect(after.rows).toBe(0);
    } finally {
      await t.dispose();
    }
  });
});
