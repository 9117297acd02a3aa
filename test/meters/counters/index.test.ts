/** The counter registry: every counter under its manifest name, and the shared input rules. */
import { describe, expect, it } from 'vitest';
import { COUNTERS, CounterInputError, counterNamed } from '../../../src/meters/counters/index.js';
import { textRecords } from '../../../src/meters/counters/text-records.js';

describe('counter registry', () => {
  it('holds each counter under its own name, with its unit', () => {
    const units = Object.fromEntries([...COUNTERS].map(([name, c]) => [name, c.unit]));
    expect(units).toEqual({
      characters: 'character',
      'utf16-units': 'character',
      'text-elements': 'text_element',
      'text-records': 'text_record',
      tokens: 'token',
      'image-units': 'image_unit',
      'image-size-units': 'image_unit',
      'audio-seconds': 'second',
      files: 'file',
      pages: 'page',
      'document-characters': 'character',
      'list-items': 'item',
    });
    for (const [name, counter] of COUNTERS) expect(counter.name).toBe(name);
  });

  it('finds a counter by its exact name, and nothing for an unknown one', () => {
    expect(counterNamed('text-records')).toBe(textRecords);
    expect(counterNamed('page')).toBeUndefined();
    expect(counterNamed('Characters')).toBeUndefined();
    expect(counterNamed('')).toBeUndefined();
  });

  it('every text counter takes absent values as 0 and refuses the same wrong types', () => {
    for (const name of ['characters', 'text-elements', 'text-records', 'tokens']) {
      const counter = counterNamed(name)!;
      expect(counter.count([]), name).toBe(0);
      expect(counter.count([undefined]), name).toBe(0);
      for (const bad of [[42], [{}], [null], [['a', 1]]]) {
        expect(() => counter.count(bad), `${name} ${JSON.stringify(bad)}`).toThrow(CounterInputError);
      }
    }
  });

  it('throws errors that say what they are', () => {
    try {
      counterNamed('characters')!.count([['a', 1]]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CounterInputError);
      expect(err).toMatchObject({ name: 'CounterInputError', counter: 'characters', valueIndex: 0 });
    }
  });
});
