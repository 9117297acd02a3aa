/**
 * Exact money. Amounts are integer nano-USD (1 USD = 1e9 nano) held in bigint; prices and amounts
 * cross the YAML and JSON boundaries as decimal strings. No floating point touches a balance.
 */

/** Nano-USD per USD. */
export const NANO_PER_USD = 1_000_000_000n;

const DECIMAL = /^(-)?(\d+)(?:\.(\d{1,9}))?$/;

/** Parses a decimal USD string ("0.15", "-2", "10.000000001") into nano-USD; throws on anything else. */
export function parseUsd(text: string): bigint {
  const match = DECIMAL.exec(text.trim());
  if (!match) throw new RangeError(`not a USD amount with at most 9 decimals: ${JSON.stringify(text)}`);
  const [, sign, whole, frac = ''] = match;
  const nano = BigInt(whole!) * NANO_PER_USD + BigInt(frac.padEnd(9, '0'));
  return sign ? -nano : nano;
}

/** Formats nano-USD as a decimal USD string with trailing zeros trimmed ("0.15", "-0.000000001", "0"). */
export function formatUsd(nano: bigint): string {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  const whole = abs / NANO_PER_USD;
  const frac = (abs % NANO_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  const text = frac ? `${whole}.${frac}` : `${whole}`;
  return negative ? `-${text}` : text;
}

/**
 * Divides exactly and rounds half away from zero: the one rounding step of a usage row.
 * Used as `quantity * priceNano / per`, so a row is rounded once, never per token.
 */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  const quotient = (abs + denominator / 2n) / denominator;
  return negative ? -quotient : quotient;
}
