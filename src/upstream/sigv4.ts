/**
 * AWS Signature Version 4 (issue 32 item 2: the sigv4 auth scheme), as AWS documents it
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv_create-signed-request.html): a
 * canonical request (method, the path with each segment URI-encoded twice, as every service but S3
 * wants, the sorted query, the signed headers, the payload's SHA-256), a string to sign over its hash
 * and the credential scope, and an HMAC chain from the secret through date, region and service. The
 * signature covers `host`, `x-amz-date`, the payload hash, the session token when there is one, and
 * every header given.
 */
import { createHash, createHmac } from 'node:crypto';

/** The credentials to sign with (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optional AWS_SESSION_TOKEN). */
export interface AwsCredentials { accessKeyId: string; secretAccessKey: string; sessionToken?: string }

/** One request to sign. `headers` are those it will carry (names in any case); `body` its exact bytes. */
export interface SignableRequest { method: string; url: URL; headers: Record<string, string>; body: string | Uint8Array }

const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters, in upper-case hex. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The canonical URI: each segment of the path as sent (already encoded once) encoded again. */
function canonicalPath(url: URL): string {
  return url.pathname.split('/').map((segment) => uriEncode(segment)).join('/') || '/';
}

function canonicalQuery(url: URL): string {
  const pairs = [...url.searchParams.entries()].map(([k, v]) => [uriEncode(k), uriEncode(v)] as const);
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** `20261203T101500Z` and `20261203` for an instant. */
function amzDates(now: Date): { stamp: string; day: string } {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return { stamp, day: stamp.slice(0, 8) };
}

/**
 * The headers that sign `request` for `service` in `region` at `now`: `authorization`, `x-amz-date`,
 * `x-amz-content-sha256` and, with a session token, `x-amz-security-token`. The request must then be sent with exactly these
 * and its own headers, to the same host, with the same body.
 */
export function signV4(request: SignableRequest, credentials: AwsCredentials, region: string, service: string, now: Date, opts: { payloadHashHeader?: boolean } = {}): Record<string, string> {
  const { stamp, day } = amzDates(now);
  const payloadHash = sha256Hex(request.body);
  // The payload's hash travels signed, as the AWS SDKs send it (off only to check AWS's test suite).
  const added: Record<string, string> = { ...(opts.payloadHashHeader === false ? {} : { 'x-amz-content-sha256': payloadHash }), 'x-amz-date': stamp };
  if (credentials.sessionToken) added['x-amz-security-token'] = credentials.sessionToken;
  const all = new Map<string, string>();
  for (const [name, value] of Object.entries({ ...request.headers, host: request.url.host, ...added })) {
    all.set(name.toLowerCase(), value.trim().replace(/\s+/g, ' '));
  }
  const names = [...all.keys()].sort();
  const signedHeaders = names.join(';');
  const canonical = [
    request.method.toUpperCase(), canonicalPath(request.url), canonicalQuery(request.url),
    names.map((n) => `${n}:${all.get(n)}\n`).join(''), signedHeaders, payloadHash,
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  added.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return added;
}
