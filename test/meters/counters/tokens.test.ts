/** `tokens`: o200k tokens of every string, by src/tokenize.ts, each string on its own; token-id arrays by their ids. */
import { describe, expect, it } from 'vitest';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { tokens } from '../../../src/meters/counters/tokens.js';
import { countTextTokens } from '../../../src/tokenize.js';

describe('tokens counter', () => {
  it('has its name and unit', () => {
    expect(tokens.name).toBe('tokens');
    expect(tokens.unit).toBe('token');
  });

  it('counts nothing for no text', () => {
    expect(tokens.count([])).toBe(0);
    expect(tokens.count([''])).toBe(0);
    expect(tokens.count([undefined, []])).toBe(0);
  });

  it('counts o200k tokens of every string of every value, each string tokenized on its own', () => {
    expect(tokens.count(['hello world'])).toBe(2); // "hello", " world"
    expect(tokens.count(['hello world', ['hello world', 'hello world']])).toBe(6);
    const texts = ['Bonjour le monde', '你好世界', '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}', 'e\u0301'];
    const expected = texts.reduce((sum, t) => sum + countTextTokens(t), 0);
    expect(tokens.count([texts[0], texts.slice(1)])).toBe(expected);
  });

  it('counts a pre-tokenized value (token ids, or a list of token-id arrays) by its ids', () => {
    expect(tokens.count([[15339, 1917]])).toBe(2);
    expect(tokens.count([[[1, 2, 3], [4], [5, 6]]])).toBe(6);
    expect(tokens.count(['hello world', [7, 8, 9]])).toBe(5);
    // Not token ids: a list mixing texts and ids, negative or fractional ids, empty id arrays.
    expect(() => tokens.count([['hello', 1]])).toThrow('counter tokens: value 0 item 1 is a number; expected a string');
    expect(() => tokens.count([[1, -2]])).toThrow(CounterInputError);
    expect(() => tokens.count([[1.5]])).toThrow(CounterInputError);
    expect(() => tokens.count([[[]]])).toThrow(CounterInputError);
  });

  it('throws CounterInputError on a wrong type', () => {
    expect(() => tokens.count([5])).toThrow(CounterInputError);
    expect(() => tokens.count([5])).toThrow('counter tokens: value 0 is a number');
    expect(() => tokens.count([[false]])).toThrow('counter tokens: value 0 item 0 is a boolean; expected a string');
  });
});
