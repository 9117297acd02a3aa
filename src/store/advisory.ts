/** PostgreSQL advisory lock keys: a stable signed 64-bit key for a text (the jobs' and the per-account file quota locks). */
import { createHash } from 'node:crypto';

/** The first 64 bits of the SHA-256 of `text`, as the signed bigint pg_advisory_*lock takes. */
export function advisoryLockKey(text: string): bigint {
  return BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(text).digest('hex').slice(0, 16)}`));
}
