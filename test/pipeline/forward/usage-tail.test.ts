/**
 * A stream's held final usage (src/pipeline/forward/usage-tail.ts; issue 31 item 12): frames pass
 * until the one carrying the final usage; it and every later frame wait, and go out in order with
 * `usage.cost` the charge (0 when nothing was charged). A format with no usage place holds nothing.
 */
import { describe, expect, it } from 'vitest';
import { openaiChatFormat } from '../../../src/formats/openai-chat/index.js';
import { UsageTail } from '../../../src/pipeline/forward/usage-tail.js';
import { formatSse } from '../../../src/translate/sse.js';

const content = formatSse(JSON.stringify({ choices: [{ delta: { content: 'hi' } }], usage: null }));
const usage = formatSse(JSON.stringify({ choices: [], usage: { total_tokens: 3 } }));
const after = formatSse(JSON.stringify({ choices: [], note: 'after' }));

describe('UsageTail', () => {
  it('holds the usage frame and what follows, across steps, and releases them with the charge', () => {
    const tail = new UsageTail(openaiChatFormat.usageCost);
    expect(tail.take([content, content])).toEqual([content, content]);
    expect(tail.take([content, usage])).toEqual([content]);
    expect(tail.take([after])).toEqual([]);
    expect(tail.release(25n)).toBe(formatSse('{"choices":[],"usage":{"total_tokens":3,"cost":0.000000025}}') + after);
    expect(tail.release(25n)).toBe('');
  });

  it('says 0 when nothing was charged, and holds nothing without a usage place', () => {
    const tail = new UsageTail(openaiChatFormat.usageCost);
    tail.take([usage]);
    expect(JSON.parse(tail.release(undefined).slice(6)).usage.cost).toBe(0);
    const none = new UsageTail(null);
    expect(none.take([content, usage, after])).toEqual([content, usage, after]);
    expect(none.release(1n)).toBe('');
  });
});
