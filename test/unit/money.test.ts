/** Exact money: decimal strings <-> integer nano-USD, and the one rounding of a usage row. */
import { describe, expect, it } from 'vitest';
import { divideRounded, formatUsd, parseUsd } from '../../src/money.js';

describe('money', () => {
  it('parses decimal USD exactly', () => {
    expect(parseUsd('0.15')).toBe(150_000_000n);
    expect(parseUsd('10')).toBe(10_000_000_000n);
    expect(parseUsd('-0.000000001')).toBe(-1n);
    expect(parseUsd('123456789.123456789')).toBe(123_456_789_123_456_789n);
  });

  it('refuses floats it cannot hold exactly and junk', () => {
    for (const bad of ['0.0000000001', '1e3', 'abc', '', '.5', '1.', ' ', '0x10', 'NaN']) expect(() => parseUsd(bad), bad).toThrow(RangeError);
  });

  it('formats with trailing zeros trimmed and round-trips', () => {
    expect(formatUsd(150_000_000n)).toBe('0.15');
    expect(formatUsd(0n)).toBe('0');
    expect(formatUsd(-1n)).toBe('-0.000000001');
    for (const text of ['0.1', '2.5', '-7.000000003', '1000000']) expect(formatUsd(parseUsd(text))).toBe(text);
  });

  it('rounds half away from zero, once', () => {
    expect(divideRounded(5n, 10n)).toBe(1n);
    expect(divideRounded(4n, 10n)).toBe(0n);
    expect(divideRounded(-5n, 10n)).toBe(-1n);
    expect(divideRounded(1_500_000n, 1_000_000n)).toBe(2n);
    expect(() => divideRounded(1n, 0n)).toThrow(RangeError);
  });
});
