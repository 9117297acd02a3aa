/**
 * The content-chunk shape of an OpenAI stream (src/translate/openai-chat--openai-chat/template.ts):
 * learnt from one checked chunk, it must accept exactly the chunks that differ from it in their
 * content string and `obfuscation` padding alone, and give for them the frame re-serializing gives.
 */
import { describe, expect, it } from 'vitest';
import { clientChunk } from '../../src/translate/openai-chat--openai-chat/stream.js';
import { ContentTemplate, nullUsageAt } from '../../src/translate/openai-chat--openai-chat/template.js';

const UPSTREAM = 'gpt-4o-mini-2024-07-18';
const FROM = `"model":"${UPSTREAM}"`;
const TO = '"model":"gpt-4o-mini"';

/** A chunk as OpenAI writes it (usage null; padding last when given). */
function chunk(content: unknown, padding?: string, extra: Record<string, unknown> = {}): string {
  const body = JSON.stringify({
    id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: UPSTREAM, service_tier: 'default', system_fingerprint: 'fp_1',
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], usage: null, ...extra,
  });
  return padding === undefined ? body : `${body.slice(0, -1)},"obfuscation":"${padding}"}`;
}

/** The frame re-serializing the parsed chunk gives (the general path's reference). */
const reference = (data: string, dropUsage: boolean): string =>
  `data: ${clientChunk(data, JSON.parse(data) as Record<string, unknown>, 'gpt-4o-mini', dropUsage)}\n\n`;

describe('nullUsageAt', () => {
  it('finds `"usage":null` as the last member, or before the padding alone', () => {
    for (const data of [chunk('a'), chunk('a', 'Zx09'), chunk('a', '')]) expect(nullUsageAt(data), data).toBe(data.indexOf(',"usage":null'));
  });

  it('refuses any other end', () => {
    const bad = [
      chunk('a').replace(',"usage":null', ''), // no usage member
      chunk('a', 'x').replace('"x"', '"x\\"y"'), // a quote in the padding
      chunk('a', 'x\\n'), // an escape in the padding
      `${chunk('a').slice(0, -1)},"other":"x"}`, // another member last
      `${chunk('a').slice(0, -1)},"obfuscation":7}`,
      chunk('a').replace('"usage":null', '"usage":{"prompt_tokens":1}'),
      chunk('a').slice(0, -1),
    ];
    for (const data of bad) expect(nullUsageAt(data), data).toBe(-1);
  });
});

describe('ContentTemplate', () => {
  for (const dropUsage of [true, false]) {
    it(`gives the re-serialized frame and the content of every chunk of the shape (usage ${dropUsage ? 'dropped' : 'kept'})`, () => {
      const template = ContentTemplate.learn(chunk('first', 'ab'), FROM, TO, dropUsage)!;
      const contents = ['', ' word', 'a "quote"', 'back\\slash', 'caf\u00e9 \u{1F600}', '\n\t', 'a token longer than twelve', '"model":"x","usage":{}', '</script>'];
      for (const content of contents) {
        for (const padding of [undefined, 'Q', 'pad0123456789xyz']) {
          const data = chunk(content, padding);
          expect(template.match(data), data).toEqual({ frame: reference(data, dropUsage), content });
        }
      }
    });
  }

  it('refuses a chunk that differs anywhere but the content and the padding', () => {
    const template = ContentTemplate.learn(chunk('first'), FROM, TO, true)!;
    const others = [
      chunk('a').replace('chatcmpl-1', 'chatcmpl-2'),
      chunk('a').replace('"finish_reason":null', '"finish_reason":"stop"'),
      chunk('a').replace('{"content":"a"}', '{"content":"a","refusal":null}'),
      chunk('a', undefined, { extra: 1 }),
      chunk('a').replace(',"usage":null', ''),
      chunk('a', 'x\\"'),
      chunk('a').replace('"a"', '"a\u0001"'), // a raw control character
      chunk('a').replace('"a"', '"a\\x"'), // a malformed escape
      chunk('a').replace('"a"', '"a'), // unterminated
      '[DONE]',
    ];
    for (const data of others) expect(template.match(data), data).toBeNull();
  });

  it('is not learnt from a chunk without the parts it needs', () => {
    expect(ContentTemplate.learn(chunk('a').replace(',"usage":null', ''), FROM, TO, true)).toBeNull();
    expect(ContentTemplate.learn(chunk('a'), '"model":"other"', TO, true)).toBeNull();
    expect(ContentTemplate.learn(JSON.stringify({ model: UPSTREAM, choices: [{ delta: { role: 'assistant' } }], usage: null }), FROM, TO, true)).toBeNull();
  });
});
