/**
 * The flex image model's size rule (spec 4.14, "Flex-type model"): `size` is explicit (`WxH`, never
 * `auto` or absent); each side is 64 to 2048 pixels in multiples of 16; the image holds at most four
 * 1024x1024 units (w x h <= 4 x 1024 x 1024). Pure; a violation is a 400 naming `size`.
 */
import { GatewayError } from '../../errors.js';
import { IMAGE_UNIT_PIXELS } from '../../meters/counters/image-units.js';

/** Sides in pixels. */
export interface FlexSize { width: number; height: number }

/** Bounds of one side and its step, and the largest area in 1024x1024 units. */
export const FLEX_SIDE = { min: 64, max: 2048, step: 16 } as const;
export const FLEX_MAX_UNITS = 4;

const refuse = (message: string): GatewayError => new GatewayError('unsupported_parameter', message, { param: 'size' });

/** Reads and checks `size`; throws the client's 400 naming `size` and the rule it breaks. */
export function flexSize(size: unknown, model: string): FlexSize {
  if (size === undefined || size === null) throw new GatewayError('invalid_request', `Missing required parameter: 'size' (${model} takes an explicit WIDTHxHEIGHT, e.g. 1024x1024).`, { param: 'size' });
  const match = typeof size === 'string' ? /^([1-9]\d{0,4})x([1-9]\d{0,4})$/.exec(size) : null;
  if (!match) throw refuse(`Unsupported value for 'size' on model "${model}": ${JSON.stringify(size)}. Give an explicit WIDTHxHEIGHT such as 1024x1024 (auto is not supported).`);
  const width = Number(match[1]);
  const height = Number(match[2]);
  const { min, max, step } = FLEX_SIDE;
  for (const side of [width, height]) {
    if (side < min || side > max || side % step !== 0) {
      throw refuse(`Unsupported value for 'size' on model "${model}": ${size}. Each side must be ${min} to ${max} pixels in multiples of ${step}.`);
    }
  }
  if (width * height > FLEX_MAX_UNITS * IMAGE_UNIT_PIXELS) {
    throw refuse(`Unsupported value for 'size' on model "${model}": ${size} is more than ${FLEX_MAX_UNITS} 1024x1024 units (at most ${FLEX_MAX_UNITS * IMAGE_UNIT_PIXELS} pixels).`);
  }
  return { width, height };
}
