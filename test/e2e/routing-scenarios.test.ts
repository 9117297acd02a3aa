/**
 * The fault catalogue of issue 29 (S01-S16, S14 with stream rescue), each through the official openai
 * SDK streaming against a gateway whose offering has one fallback, with the simulator counting every
 * attempt it receives and when. Every scenario has its own offerings (sNN and sNN-fb, upstream models
 * of the same names) and its own account, so they run side by side; after each, the account's money
 * is conserved (opening == balance + held + usage) and only the serving offering is billed.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { addOpenaiOfferings, chatOffering, expectConserved, simRequests } from '../helpers/routing.js';

const MESSAGES = [{ role: 'user' as const, content: 'Tell me about fail-over' }];
const FALLBACK_PRICES = { input: '2.50', output: '10.00' };
const SCENARIOS = ['s01', 's02', 's03', 's04', 's05', 's06', 's07', 's08', 's09', 's10', 's11', 's12', 's13', 's15', 's16'];

/** Per-scenario routing overrides (YAML keys). */
const ROUTING: Record<string, Record<string, unknown>> = {
  s06: { deadline_ms: 20000 },
  s07: { first_token_timeout_ms: 10000 },
};

/** What a streamed answer looked like to the SDK. */
interface Streamed { text: string; model: string | null; finish: string | null; usage: OpenAI.CompletionUsage | null; error: unknown; headers: Headers | null; ms: number }

describeStore('routing scenarios (issue 29)', () => {
  let t: TestGateway;

  beforeAll(async () => {
    const copy = await copyConfig();
    await addOpenaiOfferings(copy, SCENARIOS.flatMap((s) => [
      chatOffering(s, {
        fallbacks: [`${s}-fb`],
        ...(s === 's12' ? { context_window_fallbacks: [`${s}-fb`] } : {}),
        ...(ROUTING[s] ? { routing: ROUTING[s] } : {}),
      }),
      chatOffering(`${s}-fb`, {}, FALLBACK_PRICES),
    ]));
    // Stream rescue (S08 continued, S14): messages-format offerings whose backup deployment takes a prefill.
    await copy.editYaml('providers/anthropic.yaml', (doc) => {
      const claude = doc.offerings.find((o: { id: string }) => o.id === 'claude-haiku-4-5');
      for (const id of ['r08', 'r14']) {
        doc.offerings.push({
          ...claude, id, aliases: undefined, upstream_model: undefined, continuation: 'prefill',
          deployments: [{ provider: 'anthropic', upstream_model: `${id}-a` }, { provider: 'anthropic', upstream_model: `${id}-b`, priority: 1 }],
        });
      }
    });
    t = await startTestGateway({ configFile: copy.configFile });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  async function account(): Promise<{ id: string; client: OpenAI; opening: bigint }> {
    const a = await t.account('5');
    return { id: a.id, client: new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 }), opening: parseUsd('5') };
  }

  async function stream(client: OpenAI, model: string, extra: Record<string, unknown> = {}): Promise<Streamed> {
    const started = performance.now();
    const out: Streamed = { text: '', model: null, finish: null, usage: null, error: null, headers: null, ms: 0 };
    try {
      const { data, response } = await client.chat.completions.create({ model, messages: MESSAGES, stream: true, stream_options: { include_usage: true }, ...extra } as OpenAI.ChatCompletionCreateParamsStreaming).withResponse();
      out.headers = response.headers;
      for await (const chunk of data) {
        out.model = chunk.model;
        out.text += chunk.choices[0]?.delta?.content ?? '';
        out.finish = chunk.choices[0]?.finish_reason ?? out.finish;
        if (chunk.usage) out.usage = chunk.usage;
      }
    } catch (error) {
      out.error = error;
    }
    out.ms = performance.now() - started;
    return out;
  }

  async function conserved(a: { id: string; opening: bigint }, servedBy: string | null): Promise<void> {
    const rows = await expectConserved(t, a.id, a.opening);
    if (servedBy === null) expect(rows).toEqual([]);
    else for (const row of rows) expect(row.model).toBe(servedBy);
  }

  describe.concurrent('each scenario', () => {
    it('S01: 429 with Retry-After 2, then healthy: retried after >= 1.8 s, at most 2 attempts in the first 1.5 s', async () => {
      const a = await account();
      await t.fault({ status: 429, retry_after_seconds: 2, times: 1 }, 's01');
      const r = await stream(a.client, 's01');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s01');
      expect(r.headers!.get('x-gateway-attempts')).toBe('2');
      const seen = await simRequests(t, 's01');
      expect(seen).toHaveLength(2);
      expect(seen[1]!.at_ms - seen[0]!.at_ms).toBeGreaterThanOrEqual(1800);
      expect(seen.filter((s) => s.at_ms - seen[0]!.at_ms < 1500)).toHaveLength(1);
      expect(await simRequests(t, 's01-fb')).toHaveLength(0);
      await conserved(a, 's01');
    });

    it('S02: 429 without Retry-After, always: at most 4 attempts in 3 s, at most 6 in all, then the fallback answers', async () => {
      const a = await account();
      await t.fault({ status: 429, omit_retry_after: true }, 's02');
      const r = await stream(a.client, 's02');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s02-fb');
      const seen = await simRequests(t, 's02');
      const all = [...seen, ...(await simRequests(t, 's02-fb'))];
      expect(all.length).toBeLessThanOrEqual(6);
      expect(all.filter((s) => s.at_ms - seen[0]!.at_ms < 3000).length).toBeLessThanOrEqual(4);
      await conserved(a, 's02-fb');
    });

    it('S03: 500 once: retried on the same deployment and answered', async () => {
      const a = await account();
      await t.fault({ status: 500, times: 1 }, 's03');
      const r = await stream(a.client, 's03');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s03');
      expect(r.finish).toBe('stop');
      expect(await simRequests(t, 's03')).toHaveLength(2);
      expect(await simRequests(t, 's03-fb')).toHaveLength(0);
      await conserved(a, 's03');
    });

    it('S04: 503 always: failed over within the attempt budget', async () => {
      const a = await account();
      await t.fault({ status: 503 }, 's04');
      const r = await stream(a.client, 's04');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s04-fb');
      expect(r.headers!.get('x-gateway-attempts')).toBe('3');
      expect(r.headers!.get('x-gateway-provider')).toBe('openai');
      expect(await simRequests(t, 's04')).toHaveLength(2);
      expect(await simRequests(t, 's04-fb')).toHaveLength(1);
      await conserved(a, 's04-fb');
    });

    it('S05: a reset before headers: retried and answered', async () => {
      const a = await account();
      await t.fault({ reset_before_headers: true, times: 1 }, 's05');
      const r = await stream(a.client, 's05');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s05');
      expect(await simRequests(t, 's05')).toHaveLength(2);
      await conserved(a, 's05');
    });

    it('S06: no answer for 120 s: ended well within 100 s, the silent deployment tried once, the fallback answers', async () => {
      const a = await account();
      await t.fault({ latency_ms: 120_000 }, 's06');
      const r = await stream(a.client, 's06');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s06-fb');
      expect(r.ms).toBeLessThan(100_000);
      expect(await simRequests(t, 's06')).toHaveLength(1);
      await conserved(a, 's06-fb');
    }, 60_000);

    it('S07: first token after 20 s with first_token_timeout_ms 10000: the fallback answers within 15 s', async () => {
      const a = await account();
      await t.fault({ first_event_delay_ms: 20_000 }, 's07');
      const r = await stream(a.client, 's07');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s07-fb');
      expect(r.ms).toBeLessThan(15_000);
      expect(await simRequests(t, 's07')).toHaveLength(1);
      await conserved(a, 's07-fb');
    }, 60_000);

    it('S08: stream cut after 40 of 60 tokens: a clean error, never a truncated success; what was delivered is billed', async () => {
      const a = await account();
      // The role chunk is the first event: 41 events are the role and 40 words.
      await t.fault({ answer_words: 60, truncate_after_chunks: 41 }, 's08');
      const r = await stream(a.client, 's08');
      expect(r.error).toBeInstanceOf(OpenAI.APIError);
      expect(r.finish).not.toBe('stop');
      expect(r.text.split(' ').filter(Boolean).length).toBeGreaterThan(0);
      const rows = await expectConserved(t, a.id, a.opening);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.model).toBe('s08');
      expect(rows[0]!.details.counted_by).toBe('gateway_tokenizer');
    });

    it('S08 continued: a cut stream of a model that takes a prefill is finished on its backup as one answer, each part billed once', async () => {
      const a = await account();
      const whole = (await stream(a.client, 'r08')).text;
      const opening = (await t.settled(a.id))!.balanceNano;
      // message_start, content_block_start and ping come before the first word: 43 events are 40 words.
      await t.fault({ answer_words: 60, truncate_after_chunks: 43 }, 'r08-a');
      await t.fault({ answer_words: 60 }, 'r08-b');
      const r = await stream(a.client, 'r08');
      expect(r.error).toBeNull();
      expect(r.finish).toBe('stop');
      expect(r.model).toBe('r08');
      expect(r.text.trim().split(/\s+/)).toHaveLength(60);
      expect(r.text.startsWith(whole.split(' ').slice(0, 5).join(' '))).toBe(true);
      const backup = await simRequests(t, 'r08-b');
      expect(backup).toHaveLength(1);
      expect(backup[0]!.last_role).toBe('assistant');
      const rows = (await expectConserved(t, a.id, a.opening)).slice(0, 2).reverse();
      expect(rows.map((row) => row.deployment)).toEqual(['anthropic/r08-a', 'anthropic/r08-b']);
      expect(rows[0]!.details.counted_by).toBe('gateway_tokenizer');
      expect(rows[1]!.details.counted_by).toBeUndefined();
      const after = (await t.settled(a.id))!.balanceNano;
      expect(opening - after).toBe(rows[0]!.amountNano + rows[1]!.amountNano);
    });

    it('S14: a cut stream whose backup rejects the prefill: a clean error that is not the prefill\'s 400, the delivered part billed', async () => {
      const a = await account();
      await t.fault({ answer_words: 60, truncate_after_chunks: 43 }, 'r14-a');
      await t.fault({ reject_prefill: true }, 'r14-b');
      const r = await stream(a.client, 'r14');
      expect(r.error).toBeInstanceOf(OpenAI.APIError);
      expect((r.error as Error).message).not.toContain('prefill');
      expect(r.finish).not.toBe('stop');
      expect(r.text.trim().split(/\s+/)).toHaveLength(40);
      const prefilled = await simRequests(t, 'r14-b');
      expect(prefilled).toHaveLength(1);
      expect(prefilled[0]!.status).toBe(400);
      const rows = await expectConserved(t, a.id, a.opening);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.deployment).toBe('anthropic/r14-a');
    });

    it('S09: a stall after 20 tokens for 30 s: the whole answer or a clean error within 45 s, and the gateway healthy afterwards', async () => {
      const a = await account();
      await t.fault({ answer_words: 60, stall_after_chunks: 21, stall_ms: 30_000, times: 1 }, 's09');
      const r = await stream(a.client, 's09');
      expect(r.ms).toBeLessThan(45_000);
      if (r.error) {
        expect(r.error).toBeInstanceOf(OpenAI.APIError);
        expect(r.finish).not.toBe('stop');
      } else {
        expect(r.finish).toBe('stop');
        expect(r.text.trim().split(/\s+/)).toHaveLength(60);
      }
      const after = await stream(a.client, 's09');
      expect(after.error).toBeNull();
      expect(after.finish).toBe('stop');
      await expectConserved(t, a.id, a.opening);
    }, 60_000);

    it('S10: one malformed event after content: a clean error, no garbage reaches the client', async () => {
      const a = await account();
      // Paced, so that content reaches the client before the malformed event arrives (in one piece
      // with content already delivered it would be retried whole instead, the client having seen nothing).
      await t.fault({ malformed_after_chunks: 5, chunk_delay_ms: 30, times: 1 }, 's10');
      const r = await stream(a.client, 's10');
      // The SDK parses every chunk it gets: garbage would be a SyntaxError, not the gateway's error event.
      expect(r.error).toBeInstanceOf(OpenAI.APIError);
      expect((r.error as Error).message).toContain('malformed');
      expect(r.text.length).toBeGreaterThan(0);
      await expectConserved(t, a.id, a.opening);
    });

    it('S10: a malformed event before content is retried: the answer is whole', async () => {
      const a = await account();
      await t.fault({ malformed_after_chunks: 1, times: 1 }, 's10-fb');
      const r = await stream(a.client, 's10-fb');
      expect(r.error).toBeNull();
      expect(r.finish).toBe('stop');
      // The same text as a stream without the fault.
      expect(r.text).toBe((await stream(a.client, 's10-fb')).text);
      await conserved(a, 's10-fb');
    });

    it('S11: no [DONE]: finished promptly with its usage', async () => {
      const a = await account();
      await t.fault({ omit_done: true }, 's11');
      const r = await stream(a.client, 's11');
      expect(r.error).toBeNull();
      expect(r.finish).toBe('stop');
      expect(r.usage?.completion_tokens).toBeGreaterThan(0);
      expect(r.ms).toBeLessThan(5_000);
      const rows = await expectConserved(t, a.id, a.opening);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.details.output).toBe(r.usage!.completion_tokens);
    });

    it('S12: context_length_exceeded: one attempt, then context_window_fallbacks', async () => {
      const a = await account();
      await t.fault({ status: 400, error_code: 'context_length_exceeded' }, 's12');
      const r = await stream(a.client, 's12');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s12-fb');
      expect(await simRequests(t, 's12')).toHaveLength(1);
      await conserved(a, 's12-fb');
    });

    it('S13: content_policy_violation: one attempt, the vendor reason to the client, no fallback by default', async () => {
      const a = await account();
      await t.fault({ status: 400, error_code: 'content_policy_violation' }, 's13');
      const r = await stream(a.client, 's13');
      expect(r.error).toBeInstanceOf(OpenAI.BadRequestError);
      const error = r.error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.code).toBe('content_policy_violation');
      expect(error.message).toContain('safety system');
      expect(await simRequests(t, 's13')).toHaveLength(1);
      expect(await simRequests(t, 's13-fb')).toHaveLength(0);
      await conserved(a, null);
    });

    it('S15: primary 503 for its first 60 s, twenty requests 4 s apart: all answered, few primary attempts while open, back within 30 s of recovery', async () => {
      const a = await account();
      await t.fault({ status: 503, active_for_ms: 60_000 }, 's15');
      const start = Date.now();
      const served: Array<{ at: number; model: string | null }> = [];
      for (let i = 0; i < 20; i++) {
        const due = start + i * 4000;
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        const r = await stream(a.client, 's15');
        expect(r.error).toBeNull();
        served.push({ at: Date.now() - start, model: r.model });
      }
      const primary = (await simRequests(t, 's15')).map((s) => s.at_ms - start);
      const failing = primary.filter((at) => at < 60_000);
      // Two attempts for each of the first requests until the circuit opens (5 failures), then a probe every 30 s.
      expect(failing.length).toBeLessThanOrEqual(8);
      const back = served.find((s) => s.at > 60_000 && s.model === 's15');
      expect(back).toBeDefined();
      expect(back!.at).toBeLessThanOrEqual(90_000 + 4000);
      expect(served.filter((s) => s.at > back!.at).every((s) => s.model === 's15')).toBe(true);
      await expectConserved(t, a.id, a.opening);
    }, 120_000);

    it('S16: primary 503 always: the answer names the fallback, carries its usage, and only the fallback is billed, at its price', async () => {
      const a = await account();
      await t.fault({ status: 503 }, 's16');
      const r = await stream(a.client, 's16');
      expect(r.error).toBeNull();
      expect(r.model).toBe('s16-fb');
      expect(r.usage).not.toBeNull();
      const rows = await expectConserved(t, a.id, a.opening);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.model).toBe('s16-fb');
      const { prompt_tokens: input, completion_tokens: output } = r.usage!;
      // 2.50 in / 10.00 out per 1M tokens, one rounding per row.
      const exact = BigInt(input) * 2_500_000_000n + BigInt(output) * 10_000_000_000n;
      expect(rows[0]!.amountNano).toBe((exact + 500_000n) / 1_000_000n);
      expect(rows[0]!.deployment).toBe('openai/s16-fb');
    });
  });
});
