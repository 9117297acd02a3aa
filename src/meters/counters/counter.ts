/**
 * The local counter contract (issue 9, "Meters are data"): a route's meter names a counter and the
 * JSON pointers (`of`) whose values it counts, e.g. `source: { counter: text-records, of: [/text, /summaries] }`.
 * Counters are pure: the same values always give the same count, and nothing is read but the values.
 */

/** A named local counter: a pure function over the values a meter's `of` pointers resolved to. */
export interface Counter {
  /** The name a route manifest uses: `counter: text-records`. */
  readonly name: string;
  /** What one counted unit is, singular: 'character', 'text_element', 'text_record', 'token', 'image_unit'. */
  readonly unit: string;
  /**
   * Counts; `values` has one entry per `of` pointer (a string, an array of strings, or undefined when
   * absent; numbers for image-units). Throws CounterInputError on a value of the wrong type.
   */
  count(values: readonly unknown[]): number;
}

/** A value a counter cannot count; the message names the counter, the value (by `of` position) and its type. */
export class CounterInputError extends Error {
  override readonly name = 'CounterInputError';

  /**
   * @param counter the counter's name
   * @param valueIndex position of the offending value in `values` (= the `of` pointer's position), or
   *   null when the problem is the list itself (e.g. the wrong number of values)
   * @param problem what is wrong, e.g. "item 2 is a number; expected a string"
   */
  constructor(readonly counter: string, readonly valueIndex: number | null, readonly problem: string) {
    super(valueIndex === null ? `counter ${counter}: ${problem}` : `counter ${counter}: value ${valueIndex} ${problem}`);
  }
}

/** A value's JSON type in words, for error messages (never the value itself: it may be user text). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : type === 'undefined' ? 'absent' : `a ${type}`;
}

/**
 * The strings of one `of` value: a string is one, an array of strings is each of them, absent
 * (undefined) is none. Anything else, including null and an array holding a non-string, throws.
 */
export function stringsOf(counter: string, value: unknown, valueIndex: number): readonly string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) {
    throw new CounterInputError(counter, valueIndex, `is ${describeType(value)}; expected a string, an array of strings, or nothing`);
  }
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string') throw new CounterInputError(counter, valueIndex, `item ${i} is ${describeType(item)}; expected a string`);
  });
  return value as string[];
}

/** Sums `measure` over every string of every value (the shape shared by characters, text-elements and tokens). */
export function sumOverStrings(counter: string, values: readonly unknown[], measure: (s: string) => number): number {
  let total = 0;
  values.forEach((value, i) => {
    for (const s of stringsOf(counter, value, i)) total += measure(s);
  });
  return total;
}
