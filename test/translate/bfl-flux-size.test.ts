/** The flex image model's size rule (spec 4.14): explicit WxH, sides 64..2048 in multiples of 16, at most four 1024x1024 units. */
import { describe, expect, it } from 'vitest';
import { flexSize } from '../../src/translate/native-json--bfl-flux/size.js';

describe('flexSize', () => {
  it('accepts the edges of the rule', () => {
    for (const size of ['64x64', '2048x2048', '1024x1024', '2048x512', '64x2048', '1040x1024', '2032x2048']) {
      const [w, h] = size.split('x').map(Number);
      expect(flexSize(size, 'flux-2-flex')).toEqual({ width: w, height: h });
    }
  });

  it('refuses, naming size, what breaks it', () => {
    const cases: Array<[unknown, string]> = [
      [undefined, "Missing required parameter: 'size'"], [null, "Missing required parameter: 'size'"],
      ['auto', 'explicit WIDTHxHEIGHT'], ['1024', 'explicit WIDTHxHEIGHT'], [1024, 'explicit WIDTHxHEIGHT'], ['1024x1024x1', 'explicit WIDTHxHEIGHT'],
      ['2064x1024', 'multiples of 16'], ['1000x1024', 'multiples of 16'], ['48x1024', 'multiples of 16'], ['1024x2050', 'multiples of 16'],
      ['2048x2064', 'multiples of 16'], ['0x1024', 'explicit WIDTHxHEIGHT'],
    ];
    for (const [size, text] of cases) {
      expect(() => flexSize(size, 'flux-2-flex'), String(size)).toThrow(expect.objectContaining({ status: 400, extra: expect.objectContaining({ param: 'size' }) }));
      expect(() => flexSize(size, 'flux-2-flex'), String(size)).toThrow(text);
    }
  });

  it('more than four units needs a side over 2048 (2048x2048 is exactly four), so the side rule refuses it first', () => {
    expect(() => flexSize('2048x2048', 'm')).not.toThrow();
    expect(() => flexSize('2048x2560', 'm')).toThrow('Each side must be 64 to 2048 pixels');
  });
});
