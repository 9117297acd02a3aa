/**
 * `image-units`: issue 11 and spec 4.14, the flex image model: "Billing rounds the actual returned image
 * up to whole 1024x1024 units per image". The `of` values are the returned image's width and height.
 */
import { CounterInputError, describeType, type Counter } from './counter.js';

/** Pixels in one image unit: 1024 x 1024. */
export const IMAGE_UNIT_PIXELS = 1024 * 1024;

/** Units of one width x height image: ceil(w * h / 1048576); 1024x1024 is 1, 1040x1024 is 2, 2048x2048 is 4. */
export function imageUnits(width: number, height: number): number {
  return Math.ceil((width * height) / IMAGE_UNIT_PIXELS);
}

/** A side in pixels: a positive integer, small enough that the area stays exact. */
function side(value: unknown, index: number, what: string): number {
  if (typeof value !== 'number') throw new CounterInputError('image-units', index, `(${what}) is ${describeType(value)}; expected a positive integer`);
  if (!Number.isInteger(value) || value <= 0 || value > 1 << 24) {
    throw new CounterInputError('image-units', index, `(${what}) is ${String(value)}; expected a positive integer of at most ${1 << 24}`);
  }
  return value;
}

/** Counts the image units of one image; `values` is exactly [width, height]. */
export const imageUnitsCounter: Counter = {
  name: 'image-units',
  unit: 'image_unit',
  count(values) {
    if (values.length !== 2) throw new CounterInputError('image-units', null, `expected exactly two values (width, height), got ${values.length}`);
    return imageUnits(side(values[0], 0, 'width'), side(values[1], 1, 'height'));
  },
};
