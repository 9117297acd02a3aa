import { describe, expect, it } from 'vitest';
import { countChatPromptTokens, countTextTokens } from '../../src/tokenize.js';

describe('countTextTokens (o200k_base)', () => {
  it('counts known strings', () => {
    expect(countTextTokens('hello world')).toBe(2);
    expect(countTextTokens('Hello, world!')).toBe(4);
    expect(countTextTokens(' lorem')).toBe(1);
    expect(countTextTokens('')).toBe(0);
  });

  it('treats special-token text as plain text instead of throwing', () => {
    expect(countTextTokens('<|endoftext|>')).toBe(7);
  });
});

describe('countChatPromptTokens', () => {
  it('applies the per-message, name and priming overheads', () => {
    // 3 (priming) + 3 + "user"(1) + "hello world"(2)
    expect(countChatPromptTokens([{ role: 'user', content: 'hello world' }])).toBe(9);
    // + name "bob" (1) + 1
    expect(countChatPromptTokens([{ role: 'user', content: 'hello world', name: 'bob' }])).toBe(11);
    expect(countChatPromptTokens([])).toBe(3);
  });

  it('counts text parts by text and other parts by their JSON', () => {
    const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
    const parts = [{ type: 'text', text: 'hello world' }, image];
    const expected = 3 + 3 + countTextTokens('user') + 2 + countTextTokens(JSON.stringify(image));
    expect(countChatPromptTokens([{ role: 'user', content: parts }])).toBe(expected);
  });

  it('adds the JSON of tools and the tool calls of assistant messages', () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }];
    const messages = [{ role: 'user', content: 'weather?' }];
    expect(countChatPromptTokens(messages, tools)).toBe(countChatPromptTokens(messages) + countTextTokens(JSON.stringify(tools)));
    expect(countChatPromptTokens(messages, [])).toBe(countChatPromptTokens(messages));
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] };
    expect(countChatPromptTokens([call])).toBe(3 + 3 + countTextTokens('assistant') + countTextTokens('get_weather') + countTextTokens('{"city":"Paris"}'));
  });

  it('is stable and tolerates odd input', () => {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Summarise the plot of Hamlet in one line.' },
    ];
    const first = countChatPromptTokens(messages);
    expect(countChatPromptTokens(structuredClone(messages))).toBe(first);
    // 3 priming + (3 + system 1 + 4) + (3 + user 1 + 11)
    expect(first).toBe(26);
    expect(() => countChatPromptTokens([null, 42, { content: { weird: true } }])).not.toThrow();
  });
});
