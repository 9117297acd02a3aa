/**
 * Console passwords (issue 13): stored only as a slow, salted scrypt hash (node:crypto), in the form
 * `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`, so the cost can be raised later and old hashes
 * still verify. Verification compares in constant time.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => scryptCallback(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))));

/** scrypt cost: N = 2^15, r = 8, p = 1 (about 32 MiB and tens of milliseconds per hash). */
const COST = { N: 32768, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
/** Memory scrypt may use: 128 * N * r bytes, with room for the largest cost this module accepts. */
const MAX_MEMORY = 256 * 1024 * 1024;

/** Shortest and longest accepted passwords (NIST SP 800-63B: at least 8; a cap keeps hashing bounded). */
export const PASSWORD_LIMITS = { min: 8, max: 256 } as const;

/** The stored form of a new password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_BYTES, { ...COST, maxmem: MAX_MEMORY });
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when `password` matches the stored hash; false for a wrong password or an unreadable hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (![cost.N, cost.r, cost.p].every((v) => Number.isSafeInteger(v) && v > 0) || 128 * cost.N * cost.r > MAX_MEMORY) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, { ...cost, maxmem: MAX_MEMORY });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
