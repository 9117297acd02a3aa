/**
 * `n` and `logprobs` on the simulator's chat completions: n choices (the same deterministic answer),
 * usage counting every choice's output tokens as the vendor reports it, and OpenAI-shaped logprobs
 * (with `top_logprobs` alternatives) in JSON answers and on every streamed content chunk.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { naturalReply, splitWords } from '../../src/sim/text.js';
import { countChatPromptTokens, countTextTokens } from '../../src/tokenize.js';
import { simCall } from './helpers.js';

let sim: Simulator;
let client: OpenAI;
beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'x', maxRetries: 0 });
});
afterAll(() => sim.close());

const messages = [{ role: 'user' as const, content: 'Hello' }];
const one = countTextTokens(naturalReply('Hello'));

describe('chat completions n and logprobs', () => {
  it('answers n choices, billed as n times one choice', async () => {
    const res = await client.chat.completions.create({ model: 'm', messages, n: 3 });
    expect(res.choices.map((c) => [c.index, c.message.content, c.finish_reason, c.logprobs])).toEqual([0, 1, 2].map((i) => [i, naturalReply('Hello'), 'stop', null]));
    expect(res.usage).toMatchObject({ prompt_tokens: countChatPromptTokens(messages), completion_tokens: 3 * one, total_tokens: countChatPromptTokens(messages) + 3 * one });
  });

  it('answers logprobs in OpenAI\'s shape, one certain entry per piece, with top_logprobs alternatives', async () => {
    const res = await client.chat.completions.create({ model: 'm', messages, logprobs: true, top_logprobs: 2 });
    const content = res.choices[0]!.logprobs!.content!;
    expect(content.map((t) => t.token)).toEqual(splitWords(naturalReply('Hello')));
    expect(content[0]).toEqual({ token: 'This', logprob: 0, bytes: [...Buffer.from('This')], top_logprobs: [{ token: 'This', logprob: 0, bytes: [...Buffer.from('This')] }, { token: ' sim', logprob: -2.5, bytes: [...Buffer.from(' sim')] }] });
    expect(res.choices[0]!.logprobs!.refusal).toBeNull();
    const plain = await client.chat.completions.create({ model: 'm', messages, logprobs: true });
    expect(plain.choices[0]!.logprobs!.content!.every((t) => t.top_logprobs.length === 0)).toBe(true);
  });

  it('streams every choice with its index, logprobs on each content chunk, and usage for all of them', async () => {
    const stream = await client.chat.completions.create({ model: 'm', messages, n: 2, logprobs: true, stream: true, stream_options: { include_usage: true } });
    const text = ['', ''];
    const tokens: string[][] = [[], []];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text[c.index] += c.delta.content ?? '';
        for (const t of c.logprobs?.content ?? []) tokens[c.index]!.push(t.token);
      }
      usage = chunk.usage ?? usage;
    }
    expect(text).toEqual([naturalReply('Hello'), naturalReply('Hello')]);
    expect(tokens).toEqual([splitWords(naturalReply('Hello')), splitWords(naturalReply('Hello'))]);
    expect(usage!.completion_tokens).toBe(2 * one);
  });

  it('refuses an n or top_logprobs out of range, and top_logprobs without logprobs', async () => {
    for (const [extra, param] of [[{ n: 0 }, 'n'], [{ n: 129 }, 'n'], [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'], [{ top_logprobs: 2 }, 'top_logprobs']] as const) {
      const res = await simCall(sim.url, '/v1/chat/completions', 'POST', { model: 'm', messages, ...extra });
      expect([res.status, res.json.error.param]).toEqual([400, param]);
    }
  });
});
