/**
 * `usage.cost` splicing (src/formats/usage-cost.ts; issue 31 item 12): the charge written as a JSON
 * number with the usage rows' exact decimal digits (never an exponent or a rounded float), at the
 * format's place, in a JSON answer and in one SSE frame; nothing changed where there is no usage.
 */
import { describe, expect, it } from 'vitest';
import { anthropicMessagesFormat } from '../../src/formats/anthropic-messages/index.js';
import { isUsageChunk, openaiChatFormat } from '../../src/formats/openai-chat/index.js';
import { openaiResponsesFormat } from '../../src/formats/openai-responses/index.js';
import { frameWithCost, jsonWithCost } from '../../src/formats/usage-cost.js';
import { formatSse } from '../../src/translate/sse.js';

describe('usage.cost', () => {
  it('writes the exact decimal, however small or large, and leaves the object as it was', () => {
    const body = { id: 'x', usage: { prompt_tokens: 3 } };
    expect(jsonWithCost(body, ['usage'], 5n)).toBe('{"id":"x","usage":{"prompt_tokens":3,"cost":0.000000005}}');
    expect(jsonWithCost(body, ['usage'], 123_450n)).toBe('{"id":"x","usage":{"prompt_tokens":3,"cost":0.00012345}}');
    expect(jsonWithCost(body, ['usage'], 12_000_000_001n)).toBe('{"id":"x","usage":{"prompt_tokens":3,"cost":12.000000001}}');
    expect(jsonWithCost(body, ['usage'], 0n)).toBe('{"id":"x","usage":{"prompt_tokens":3,"cost":0}}');
    expect(body).toEqual({ id: 'x', usage: { prompt_tokens: 3 } });
    expect(JSON.parse(jsonWithCost(body, ['usage'], 5n)!).usage.cost).toBe(0.000000005);
  });

  it('is not fooled by answer text that looks like its placeholder, and needs a usage object', () => {
    const body = { text: '"\u0000usage-cost\u0000"', usage: {} };
    expect(JSON.parse(jsonWithCost(body, ['usage'], 7n)!)).toEqual({ text: body.text, usage: { cost: 0.000000007 } });
    expect(jsonWithCost({ usage: null }, ['usage'], 1n)).toBeNull();
    expect(jsonWithCost({ response: { usage: [1] } }, ['response', 'usage'], 1n)).toBeNull();
  });

  it('splices one SSE frame at its format\'s place: chat\'s usage chunk, response.completed, message_delta', () => {
    const chunk = formatSse(JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }));
    expect(openaiChatFormat.usageCost!.frame(chunk)).toEqual(['usage']);
    expect(openaiChatFormat.usageCost!.frame(formatSse(JSON.stringify({ id: 'c', choices: [{ delta: { content: '"usage":{' } }], usage: null })))).toBeNull();
    // A vendor's spaced JSON, and a usage object after text that names usage: still the usage chunk.
    expect(isUsageChunk('data: {"id": "c", "usage" : {"prompt_tokens": 1}}\n\n')).toBe(true);
    expect(isUsageChunk(formatSse(JSON.stringify({ choices: [{ delta: { content: 'the "usage": {' } }], usage: { prompt_tokens: 1 } })))).toBe(true);
    expect(isUsageChunk('data: {"usage":null}\n\n')).toBe(false);
    expect(isUsageChunk('event: x\ndata: {"usage":{}}\n\n')).toBe(false);
    expect(frameWithCost(chunk, ['usage'], 1_500n)).toBe(formatSse('{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"cost":0.0000015}}'));

    const completed = formatSse(JSON.stringify({ type: 'response.completed', response: { usage: { input_tokens: 1 } } }), 'response.completed');
    expect(openaiResponsesFormat.usageCost!.frame(completed)).toEqual(['response', 'usage']);
    expect(openaiResponsesFormat.usageCost!.frame(formatSse('{}', 'response.output_text.delta'))).toBeNull();
    expect(frameWithCost(completed, ['response', 'usage'], 2n)).toBe(formatSse('{"type":"response.completed","response":{"usage":{"input_tokens":1,"cost":0.000000002}}}', 'response.completed'));

    const delta = formatSse(JSON.stringify({ type: 'message_delta', usage: { output_tokens: 4 } }), 'message_delta');
    expect(anthropicMessagesFormat.usageCost!.frame(delta)).toEqual(['usage']);
    expect(frameWithCost(delta, ['usage'], 10n)).toBe(formatSse('{"type":"message_delta","usage":{"output_tokens":4,"cost":0.00000001}}', 'message_delta'));
    expect(frameWithCost('data: [DONE]\n\n', ['usage'], 1n)).toBe('data: [DONE]\n\n');
  });
});
