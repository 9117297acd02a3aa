/**
 * Signed URLs the gateway serves itself when the blob store cannot sign (the local store): a
 * write-only upload URL (PUT) and a read-only download URL (GET) for one file, valid until a time.
 * Pure functions: HMAC-SHA256 over what the URL grants, no I/O and no clock of their own.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a signed URL allows: one method on one file, optionally bound to a content type and size. */
export interface SignedGrant {
  method: 'PUT' | 'GET';
  fileId: string;
  contentType?: string;
  byteSize?: number;
}

/** The outcome of checking a signed URL's query. */
export type SignedUrlCheck = 'ok' | 'expired' | 'invalid';

/** A SHA-256 MAC in unpadded base64url is always 43 characters. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;
/** Unix seconds: digits only, no sign, no exponent, no fraction. */
const EXPIRES = /^[0-9]{1,12}$/;

/**
 * `base` plus `expires=<unix seconds>&signature=<base64url>` (joined with `?` or `&` as `base`
 * needs). The MAC covers method, fileId, expires, contentType and byteSize, so none can be changed.
 * `expiresAt` is rounded down to the second, so the URL never outlives it (it may die up to 1 s early).
 */
export function signUrl(base: string, grant: SignedGrant & { expiresAt: Date }, secret: Buffer): string {
  const expires = Math.floor(grant.expiresAt.getTime() / 1000);
  if (!Number.isSafeInteger(expires) || expires < 0) throw new Error('signUrl: expiresAt is not a valid date.');
  const fields = payload(grant, String(expires));
  if (fields === null) throw new Error('signUrl: a grant field contains a line break or byteSize is not a size.');
  const sep = base.includes('?') ? '&' : '?';
  return `${base}${sep}expires=${expires}&signature=${mac(fields, secret)}`;
}

/**
 * Checks the `expires` and `signature` query values of a request against what it is used for.
 * `expires` may be a string or, after a schema's type coercion, an integer. 'invalid' for anything
 * missing, malformed, repeated (an array) or signed for something else; 'expired' only for a genuine
 * signature at or past its time (so the answer says nothing about forged ones).
 */
export function verifySignedUrl(
  query: { expires?: unknown; signature?: unknown },
  grant: SignedGrant,
  secret: Buffer,
  now: Date,
): SignedUrlCheck {
  const { signature } = query;
  const expires = typeof query.expires === 'number' ? String(query.expires) : query.expires;
  if (typeof expires !== 'string' || !EXPIRES.test(expires)) return 'invalid';
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return 'invalid';
  const fields = payload(grant, expires);
  if (fields === null) return 'invalid';
  // Compare the text, not the decoded bytes: two base64url spellings can decode to the same MAC.
  const expected = Buffer.from(mac(fields, secret));
  if (!timingSafeEqual(expected, Buffer.from(signature))) return 'invalid';
  return now.getTime() >= Number(expires) * 1000 ? 'expired' : 'ok';
}

/** The signed text, one field a line (absent ones empty); null when a field could forge a line. */
function payload(grant: SignedGrant, expires: string): string | null {
  const { method, fileId, contentType, byteSize } = grant;
  if (method !== 'PUT' && method !== 'GET') return null;
  if (byteSize !== undefined && (!Number.isSafeInteger(byteSize) || byteSize < 0)) return null;
  const fields = [method, fileId, expires, contentType ?? '', byteSize === undefined ? '' : String(byteSize)];
  if (fields.some((f) => /[\r\n]/.test(f))) return null;
  return fields.join('\n');
}

function mac(text: string, secret: Buffer): string {
  if (secret.length === 0) throw new Error('The URL signing secret is empty.');
  return createHmac('sha256', secret).update(text, 'utf8').digest('base64url');
}
