/** Identifiers: random ones for accounts/keys/topups, time-sortable ones for usage rows. */
import { randomBytes } from 'node:crypto';

/** prefix + 24 random hex chars (96 bits). */
export function randomId(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
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
    counter = randomBytes(3).readUIntBE(0, 3); // random start, leaves room to count up
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
    randomBytes(6).toString('hex')
  );
}
