/**
 * `image-size-units`: the 1024x1024 units of an image of a requested `WxH` size (spec 4.14, flex
 * image model): what admission reserves before the image exists (the settled quantity is the
 * returned image's units, reported by the translator). The `of` value is one `WxH` string.
 */
import { CounterInputError, describeType, type Counter } from './counter.js';
import { imageUnits } from './image-units.js';

const SIZE = /^([1-9]\d{0,6})x([1-9]\d{0,6})$/;

/** Counts the units of one `WxH` size; `values` is exactly [size]. */
export const imageSizeUnitsCounter: Counter = {
  name: 'image-size-units',
  unit: 'image_unit',
  count(values) {
    if (values.length !== 1) throw new CounterInputError('image-size-units', null, `expected exactly one value (a WxH size), got ${values.length}`);
    const value = values[0];
    if (typeof value !== 'string') throw new CounterInputError('image-size-units', 0, `is ${describeType(value)}; expected a WxH size such as 1024x1024`);
    const match = SIZE.exec(value);
    if (!match) throw new CounterInputError('image-size-units', 0, 'is not a WxH size such as 1024x1024');
    return imageUnits(Number(match[1]), Number(match[2]));
  },
};
