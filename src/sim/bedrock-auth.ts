/**
 * The simulator's check of AWS Signature Version 4 on Bedrock requests (issue 32 item 2), as the vendor
 * does it: the Authorization header's credential scope and signed headers, the signature recomputed over
 * the request as received (method, raw path, query, each signed header's value, the body's SHA-256) with
 * the secret of the access key it names. Only the simulator's fake credentials are known
 * (SIMULATOR_AWS_CREDENTIALS); a session token, when signed, is accepted as sent. A failure is Bedrock's
 * 403 with its `x-amzn-ErrorType`. The clock is not checked (a test must not depend on time).
 */
import type http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { signV4 } from '../upstream/sigv4.js';
import { SIMULATOR_AWS_CREDENTIALS } from '../upstream/sigv4-auth.js';

/** A refused request: Bedrock's error type and message. */
export interface SigV4Refusal { type: string; message: string }

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

/** The headers the signer adds itself (signV4 adds them again from the request's own values). */
const ADDED = new Set(['host', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token']);

function header(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** `20261203T101500Z` as a Date, or null. */
function amzDate(text: string | undefined): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : null;
}

const INVALID_SIGNATURE = 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** Null when the request is signed right for `service` with a known key; else why it is refused. */
export function verifySigV4(method: string, rawUrl: string, headers: http.IncomingHttpHeaders, body: Buffer, service: string): SigV4Refusal | null {
  const auth = AUTHORIZATION.exec(header(headers, 'authorization') ?? '');
  if (!auth) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, accessKeyId, day, region, scopeService, signedList, signature] = auth as unknown as string[];
  if (accessKeyId !== SIMULATOR_AWS_CREDENTIALS.accessKeyId) return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (scopeService !== service) return { type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}'.` };
  const date = amzDate(header(headers, 'x-amz-date'));
  const signed = signedList!.split(';');
  if (!date || !signed.includes('host') || !signed.includes('x-amz-date') || date.toISOString().slice(0, 10).replace(/-/g, '') !== day) {
    return { type: 'InvalidSignatureException', message: INVALID_SIGNATURE };
  }
  const own: Record<string, string> = {};
  for (const name of signed) if (!ADDED.has(name)) own[name] = header(headers, name) ?? '';
  const token = signed.includes('x-amz-security-token') ? header(headers, 'x-amz-security-token') : undefined;
  const url = new URL(rawUrl, `http://${header(headers, 'host') ?? 'localhost'}`);
  const expected = signV4({ method, url, headers: own, body }, { ...SIMULATOR_AWS_CREDENTIALS, ...(token ? { sessionToken: token } : {}) }, region!, service, date,
    { payloadHashHeader: signed.includes('x-amz-content-sha256') });
  const want = /Signature=([0-9a-f]{64})$/.exec(expected.authorization!)![1]!;
  const sameHeaders = /SignedHeaders=([^,]+),/.exec(expected.authorization!)![1] === signedList;
  if (!sameHeaders || !timingSafeEqual(Buffer.from(want), Buffer.from(signature!))) return { type: 'InvalidSignatureException', message: INVALID_SIGNATURE };
  return null;
}
