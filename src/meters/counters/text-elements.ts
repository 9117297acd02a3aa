/**
 * `text-elements`: Unicode text elements, i.e. extended grapheme clusters (UAX #29), the unit Azure AI
 * Language counts (spec 1 and 4.10): an emoji with a skin tone, a ZWJ family, a flag, a letter with
 * combining marks or a Hangul jamo syllable is one element.
 */
import { sumOverStrings, type Counter } from './counter.js';

/** One segmenter for the process: grapheme rules do not depend on the locale, and building one is not free. */
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Code units handed to the segmenter at once (see textElements). */
const WINDOW = 512;

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/**
 * Extended grapheme clusters in `s`, counted window by window: V8 (Node 20) copies the whole input
 * into every segment, so segmenting a long text in one go is quadratic (125,000 elements take seconds).
 * Each window starts on a cluster boundary and never ends inside a surrogate pair; every boundary
 * inside it is final except the start of its last cluster, which may continue past the window and is
 * read again as the start of the next one (a window holding a single cluster doubles until it holds two).
 */
export function textElements(s: string): number {
  let total = 0;
  let start = 0;
  let size = WINDOW;
  while (start < s.length) {
    let end = Math.min(start + size, s.length);
    if (end < s.length && HIGH_SURROGATE.test(s[end - 1]!)) end += 1;
    let count = 0;
    let lastStart = 0;
    for (const segment of GRAPHEMES.segment(s.slice(start, end))) { count += 1; lastStart = segment.index; }
    if (end === s.length) return total + count;
    if (count < 2) { size *= 2; continue; }
    total += count - 1;
    start += lastStart;
    size = WINDOW;
  }
  return total;
}

/** Counts text elements over every string in every value. */
export const textElementsCounter: Counter = {
  name: 'text-elements',
  unit: 'text_element',
  count: (values) => sumOverStrings('text-elements', values, textElements),
};
