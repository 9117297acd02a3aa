/**
 * The identity chat stream edits each chunk as text (the gateway's model id in, `usage: null` out)
 * instead of re-serializing it, and falls back to re-serializing whatever is not in the usual compact
 * form. Either way the client must get exactly the chunk the parsed form describes.
 */
import { describe, expect, it } from 'vitest';
import { clientChunk } from '../../src/translate/openai-chat--openai-chat/index.js';

const UPSTREAM = 'gpt-4o-mini-2024-07-18';
const compact = (delta: Record<string, unknown>, usage: unknown = null) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: UPSTREAM, choices: [{ index: 0, delta, finish_reason: null }], usage });

/** What the client must get: the chunk with the client's model id, without `usage` when it is dropped. */
function expected(data: string, dropUsage: boolean): Record<string, unknown> {
  const chunk: Record<string, unknown> = { ...(JSON.parse(data) as Record<string, unknown>), model: 'gpt-4o-mini' };
  if (dropUsage) delete chunk.usage;
  return chunk;
}

function check(data: string, dropUsage: boolean): string {
  const out = clientChunk(data, JSON.parse(data) as Record<string, unknown>, 'gpt-4o-mini', dropUsage);
  expect(JSON.parse(out)).toEqual(expected(data, dropUsage));
  return out;
}

describe('clientChunk', () => {
  it('edits a compact chunk as text, byte for byte what re-serializing gives', () => {
    for (const dropUsage of [true, false]) {
      const data = compact({ content: ' word' });
      expect(check(data, dropUsage)).toBe(JSON.stringify(expected(data, dropUsage)));
    }
  });

  it('never touches content that quotes the model or usage keys (escaped inside a string)', () => {
    const data = compact({ content: `"model":"${UPSTREAM}","usage":null` });
    const out = check(data, true);
    expect(JSON.parse(out).choices[0].delta.content).toBe(`"model":"${UPSTREAM}","usage":null`);
  });

  it('re-serializes a chunk in another form: spaced, usage first, a usage object, a model that is not a string', () => {
    const spaced = JSON.stringify(JSON.parse(compact({ content: 'a' })), null, 1);
    check(spaced, true);
    check(spaced, false);
    check(`{"usage":null,"model":"${UPSTREAM}","choices":[{"index":0,"delta":{"content":"b"}}]}`, true);
    check(compact({ content: 'c' }, { prompt_tokens: 1, completion_tokens: 1 }), true);
    check('{"model":7,"choices":[{"index":0,"delta":{"content":"d"}}],"usage":null}', true);
  });

  it('passes a chunk whose model is already the client\'s through unchanged when usage stays', () => {
    const data = compact({ content: 'e' }).replace(UPSTREAM, 'gpt-4o-mini');
    expect(clientChunk(data, JSON.parse(data) as Record<string, unknown>, 'gpt-4o-mini', false)).toBe(data);
  });
});
