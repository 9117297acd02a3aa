/**
 * Identifiers: random ones for accounts/keys/topups/requests, time-sortable ones for usage rows.
 * Ids are not secrets (keys are made in keys.ts straight from crypto.randomBytes): they draw on a
 * pool of crypto-random bytes refilled 4 KiB at a time, since a call into the random generator per
 * id (several per request) showed up in the gateway's CPU profile.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** `bytes` crypto-random bytes (at most 64) as lowercase hex. */
export function randomHex(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 64) throw new RangeError('randomHex takes 1 to 64 bytes');
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

/** prefix + 24 random hex chars (96 bits). */
export function randomId(prefix: string): string {
  return prefix + randomHex(12);
}

let lastMs = 0;
let counter = 0;

/**
 * prefix + 12 hex (ms since epoch) + 8 hex (per-process counter, strictly increasing within a
 * millisecond and never going back if the clock does) + 12 random hex. Lowercase hex only, so byte
 * order (COLLATE "C") == creation order within one process, and == time order across processes up to
 * clock skew.
 */
export function sortableId(prefix: string): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = parseInt(randomHex(3), 16); // random start, leaves room to count up
  } else {
    counter += 1;
    if (counter > 0xffffffff) {
      lastMs += 1;
      counter = 0;
    }
  }
  return (
    prefix +
    lastMs.toString(16).padStart(12, '0') +
    counter.toString(16).padStart(8, '0') +
    randomHex(6)
  );
}
