/** `image-units` (issue 11, spec 4.14): the returned image rounded up to whole 1024x1024 units. */
import { describe, expect, it } from 'vitest';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { IMAGE_UNIT_PIXELS, imageUnits, imageUnitsCounter } from '../../../src/meters/counters/image-units.js';

describe('image-units counter', () => {
  it('rounds the area up to whole 1024x1024 units', () => {
    expect(IMAGE_UNIT_PIXELS).toBe(1_048_576);
    expect(imageUnits(1024, 1024)).toBe(1);
    expect(imageUnits(1040, 1024)).toBe(2); // 1,064,960 pixels
    expect(imageUnits(1024, 1040)).toBe(2);
    expect(imageUnits(1024, 1023)).toBe(1);
    expect(imageUnits(1008, 1040)).toBe(1); // 1,048,320 pixels: not square, still under one unit
    expect(imageUnits(64, 64)).toBe(1);
    expect(imageUnits(1024, 2048)).toBe(2);
    expect(imageUnits(1536, 1536)).toBe(3); // 2.25 units
    expect(imageUnits(2048, 1040)).toBe(3); // 2.03 units
    expect(imageUnits(2048, 2048)).toBe(4);
  });

  it('counts from [width, height]', () => {
    expect(imageUnitsCounter.name).toBe('image-units');
    expect(imageUnitsCounter.unit).toBe('image_unit');
    expect(imageUnitsCounter.count([1040, 1024])).toBe(2);
    expect(imageUnitsCounter.count([2048, 2048])).toBe(4);
  });

  it('throws CounterInputError on a missing, non-numeric, non-positive or fractional side', () => {
    const cases: Array<[unknown[], string]> = [
      [['1024', 1024], 'counter image-units: value 0 (width) is a string; expected a positive integer'],
      [[1024, undefined], 'counter image-units: value 1 (height) is absent; expected a positive integer'],
      [[1024, null], 'counter image-units: value 1 (height) is null'],
      [[1024, 0], 'counter image-units: value 1 (height) is 0; expected a positive integer'],
      [[-16, 64], 'counter image-units: value 0 (width) is -16'],
      [[1024.5, 1024], 'counter image-units: value 0 (width) is 1024.5'],
      [[Number.NaN, 1024], 'counter image-units: value 0 (width) is NaN'],
      [[1024, Number.POSITIVE_INFINITY], 'counter image-units: value 1 (height) is Infinity'],
      [[1024], 'counter image-units: expected exactly two values (width, height), got 1'],
      [[1024, 1024, 1], 'counter image-units: expected exactly two values (width, height), got 3'],
    ];
    for (const [values, message] of cases) {
      expect(() => imageUnitsCounter.count(values)).toThrow(CounterInputError);
      expect(() => imageUnitsCounter.count(values)).toThrow(message);
    }
  });
});
