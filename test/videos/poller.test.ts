/** What a finished video is billed (spec 4.16: per second actually produced, never more than asked). */
import { describe, expect, it } from 'vitest';
import { billableSeconds } from '../../src/videos/poller.js';

describe('billableSeconds', () => {
  it.each([
    [8, 8, 8], [6.5, 8, 7], [7.9999, 8, 8], [8.0004, 8, 8], [12.4, 12, 12], [0.2, 4, 1], [3.001, 8, 4], [9.5, 8, 8],
  ])('measured %s s, asked %i s: %i s', (measured, requested, billed) => {
    expect(billableSeconds(measured, requested)).toBe(billed);
  });
});
