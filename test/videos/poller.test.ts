/** What a finished video is billed (spec 4.16: per second actually produced, never more than asked). */
import { describe, expect, it } from 'vitest';
import { billableSeconds } from '../../src/videos/poller.js';

describe('billableSeconds', () => {
  it.each([
    [8, undefined, 8, 8], [6.5, undefined, 8, 7], [7.9999, undefined, 8, 8], [8.0004, undefined, 8, 8],
    [12.4, undefined, 12, 12], [0.2, undefined, 4, 1], [null, 6, 8, 6], [null, undefined, 4, 4], [3.001, 8, 8, 4],
  ])('measured %s s, reported %s s, asked %i s: %i s', (measured, reported, requested, billed) => {
    expect(billableSeconds(measured, reported, requested)).toBe(billed);
  });
});
