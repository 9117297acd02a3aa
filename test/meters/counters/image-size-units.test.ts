/** `image-size-units` (spec 4.14, flex image model): the requested `WxH` size's 1024x1024 units, the hold's quantity. */
import { describe, expect, it } from 'vitest';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { imageSizeUnitsCounter } from '../../../src/meters/counters/image-size-units.js';

describe('image-size-units counter', () => {
  it('rounds the requested area up to whole 1024x1024 units', () => {
    const count = (size: string) => imageSizeUnitsCounter.count([size]);
    expect(count('1024x1024')).toBe(1);
    expect(count('1040x1024')).toBe(2);
    expect(count('1024x1008')).toBe(1);
    expect(count('64x64')).toBe(1);
    expect(count('2048x2048')).toBe(4);
    expect(count('1536x1024')).toBe(2);
  });

  it('refuses anything but one WxH string', () => {
    for (const values of [[], ['1024x1024', '1x1'], [1024], [null], [undefined], ['auto'], ['1024X1024'], ['0x1024'], ['1024x'], [' 1024x1024']]) {
      expect(() => imageSizeUnitsCounter.count(values), JSON.stringify(values)).toThrow(CounterInputError);
    }
  });
});
