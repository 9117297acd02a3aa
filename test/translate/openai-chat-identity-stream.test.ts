/**
 * The identity chat stream edits each chunk as text (the gateway's model id in, `usage: null` out)
 * instead of re-serializing it, and parses only the chunks not in the usual compact form; the text of
 * the others is extracted when asked. Either way the client must get exactly the chunks the parsed
 * forms describe, and the delivered text must be the whole answer's, in order.
 */
import { describe, expect, it, vi } from 'vitest';
import { ChatStream, clientChunk, contentOnly } from '../../src/translate/openai-chat--openai-chat/stream.js';

const UPSTREAM = 'gpt-4o-mini-2024-07-18';
const compact = (delta: Record<string, unknown>, usage: unknown = null) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: UPSTREAM, choices: [{ index: 0, delta, finish_reason: null }], usage });
/** A chunk with OpenAI's `obfuscation` padding after `usage`, as OpenAI sends them by default. */
const padded = (data: string, i: number): string => `${data.slice(0, -1)},"obfuscation":"${'xY3'.repeat(1 + (i % 4))}"}`;

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

/** What the stream must give for `datas`: every chunk as clientChunk re-serializes it, the usage-only chunk dropped unless asked. */
function run(datas: string[], wantsUsage: boolean): { frames: string[]; text: string; usage: unknown } {
  const stream = new ChatStream('gpt-4o-mini', wantsUsage);
  const frames: string[] = [];
  for (const data of datas) frames.push(...stream.push({ data }).frames);
  expect(stream.push({ data: '[DONE]' })).toEqual({ frames: [], done: true });
  return { frames, text: stream.deliveredText(), usage: stream.usage() };
}

describe('ChatStream', () => {
  const words = Array.from({ length: 300 }, (_, i) => ` w${i}`);
  const final = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: UPSTREAM, choices: [], usage: { prompt_tokens: 5, completion_tokens: 300 } });
  // A spaced chunk (parsed) and a chunk whose content is "error" and quotes a usage object (edited or parsed) amid the compact ones.
  const unpadded = [
    ...words.slice(0, 100).map((w) => compact({ content: w })),
    JSON.stringify(JSON.parse(compact({ content: words[100] })), null, 1),
    compact({ content: 'error' }), compact({ content: '"usage":{"x":1}' }),
    ...words.slice(101).map((w) => compact({ content: w })), final,
  ];
  const text = `${words.slice(0, 101).join('')}error"usage":{"x":1}${words.slice(101).join('')}`;

  for (const [wantsUsage, padding] of [[false, false], [true, false], [false, true], [true, true]] as const) {
    it(`forwards every chunk as re-serializing it would, and delivers the whole text in order (usage ${wantsUsage ? 'asked' : 'not asked'}${padding ? ', chunks padded' : ''})`, () => {
      const datas = padding ? unpadded.map(padded) : unpadded;
      const final = datas.at(-1)!;
      const out = run(datas, wantsUsage);
      const expectedFrames = datas
        .filter((d) => wantsUsage || d !== final)
        .map((d) => JSON.parse(`${clientChunk(d, JSON.parse(d) as Record<string, unknown>, 'gpt-4o-mini', !wantsUsage)}`));
      expect(out.frames.map((f) => JSON.parse(f.slice('data: '.length)))).toEqual(expectedFrames);
      // Byte for byte too: the frames of unparsed chunks are cut from the text as clientChunk edits it.
      expect(out.frames).toEqual(datas.filter((d) => wantsUsage || d !== final)
        .map((d) => `data: ${clientChunk(d, JSON.parse(d) as Record<string, unknown>, 'gpt-4o-mini', !wantsUsage)}\n\n`));
      expect(out.frames.every((f) => f.startsWith('data: ') && f.endsWith('\n\n'))).toBe(true);
      expect(out.frames.some((f) => f.includes(UPSTREAM))).toBe(false);
      expect(out.text).toBe(text);
      expect(out.usage).toMatchObject({ input: 5, output: 300 });
    });
  }

  /** The chunks (JSON objects) JSON.parse was given while `fn` ran; decoding a content string alone is not one. */
  function chunksParsed(fn: () => void): number {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      fn();
      return parse.mock.calls.filter(([text]) => String(text).startsWith('{')).length;
    } finally {
      parse.mockRestore();
    }
  }

  it('parses only the first usual chunk, and gives the text delivered so far at any point (a checkpoint)', () => {
    const stream = new ChatStream('gpt-4o-mini', false);
    expect(chunksParsed(() => {
      for (const w of words.slice(0, 10)) stream.push({ data: compact({ content: w }) });
      // The usage chunk is parsed, and leaves the unparsed ones be (its text is none).
      stream.push({ data: compact({}, { prompt_tokens: 1, completion_tokens: 10 }).replace(/"choices":\[[^\]]*\]/, '"choices":[]') });
    })).toBe(2);
    expect(stream.deliveredText()).toBe(words.slice(0, 10).join(''));
    for (const w of words.slice(10, 20)) stream.push({ data: compact({ content: w }) });
    expect(stream.deliveredText()).toBe(words.slice(0, 20).join(''));
  });

  it('parses only the first chunk of a padded stream too (OpenAI pads every chunk by default)', () => {
    const stream = new ChatStream('gpt-4o-mini', false);
    expect(chunksParsed(() => {
      for (const [i, w] of words.slice(0, 50).entries()) stream.push({ data: padded(compact({ content: w }), i) });
    })).toBe(1);
    expect(stream.deliveredText()).toBe(words.slice(0, 50).join(''));
  });

  it('keeps a content-only chunk as its decoded text, never the chunk: nothing left to parse when the text is asked', () => {
    const stream = new ChatStream('gpt-4o-mini', false);
    const contents = ['Hello', ' "quoted" \\ back\\slash', '\n\tline', ' caf\u00e9 \u{1F600}', '', ' a longer token than thirteen characters'];
    expect(chunksParsed(() => {
      for (const content of contents) stream.push({ data: compact({ content }) });
    })).toBe(1); // the first chunk, which names the upstream model
    expect(chunksParsed(() => expect(stream.deliveredText()).toBe(contents.join('')))).toBe(0);
  });

  it('keeps any other usual chunk whole, and the text in order around it', () => {
    const stream = new ChatStream('gpt-4o-mini', false);
    const tool = { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] };
    const twoChoices = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: UPSTREAM,
      choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }, { index: 1, delta: { content: 'y' }, finish_reason: null }], usage: null });
    const datas = [compact({ content: 'a' }), compact({ content: 'b' }), compact(tool), compact({ content: 'c' }), compact({ content: 'd', refusal: null }), twoChoices, compact({ content: 'e' })];
    for (const data of datas) stream.push({ data });
    // The tool call's chunk and every usual chunk after it until the text is asked: kept whole, parsed then.
    expect(chunksParsed(() => expect(stream.deliveredText()).toBe('ab{"city":cdxye'))).toBe(5);
    stream.push({ data: compact({ content: 'f' }) });
    expect(chunksParsed(() => expect(stream.deliveredText()).toBe('ab{"city":cdxyef'))).toBe(0);
  });

  it('reads a content-only delta exactly, and nothing else as one', () => {
    expect(contentOnly(compact({ content: 'a\\"b' }))).toBe('a\\"b'); // an escaped backslash, then an escaped quote
    expect(contentOnly(compact({ content: '"delta":{"content":"x"}' }))).toBe('"delta":{"content":"x"}');
    expect(contentOnly(compact({ content: 'x', refusal: null }))).toBeNull();
    expect(contentOnly(compact({ role: 'assistant', content: 'x' }))).toBeNull();
    expect(contentOnly(compact({}))).toBeNull();
    // A content-only delta after another one: the first one's text would be lost.
    expect(contentOnly('{"choices":[{"index":0,"delta":{"refusal":"no"}},{"index":1,"delta":{"content":"x"}}],"usage":null}')).toBeNull();
    expect(contentOnly('{"choices":[{"delta":{"content":"bad \\x escape"}}]}')).toBeNull();
    expect(contentOnly('{"choices":[{"delta":{"content":"unterminated')).toBeNull();
  });

  it('ends with an error on an error chunk or a malformed one, whatever came before', () => {
    for (const bad of ['{"error":{"message":"boom"}}', '{"id":"c1",', `{"model":"${UPSTREAM}","error":{"message":"x"},"usage":null}`]) {
      const stream = new ChatStream('gpt-4o-mini', false);
      stream.push({ data: compact({ content: 'a' }) });
      expect(stream.push({ data: bad }).error?.code, bad).toBe('upstream_error');
    }
  });
});
