/**
 * The `sigv4` auth scheme (issue 32 item 2): AWS Signature Version 4 as a provider's auth, data-driven
 * (the manifest's `auth.sigv4` names the service and where the credentials are; no provider is named
 * here). Unlike a header scheme it covers the method, path, query, headers and the body's hash, so it is
 * computed per request once the body is final (src/upstream/client.ts). A simulated provider signs with
 * the simulator's fake credentials, which the simulator verifies like the vendor would.
 */
import { signV4, type AwsCredentials } from './sigv4.js';
import type { PoolKey } from './key-pool.js';

/** A provider's compiled `auth.sigv4`: the signing service, the region and the non-secret credentials. */
export interface CompiledSigV4 {
  service: string;
  region: string;
  /** The access key id; the secret is the pool's key (the attempt's, or the simulator's). */
  accessKeyId: string;
  sessionToken?: string;
  /** True when the provider is served by the simulator: signed with SIMULATOR_AWS_CREDENTIALS. */
  simulated: boolean;
}

/**
 * The obviously fake credentials the built-in simulator accepts (its SigV4 check in src/sim/ uses
 * them to verify signatures): what a simulated sigv4 provider signs with. Never a real key.
 */
export const SIMULATOR_AWS_CREDENTIALS: Readonly<AwsCredentials> = { accessKeyId: 'AKIAGATEWAYSIMULATOR', secretAccessKey: 'gateway-simulator-fake-secret-key' };

/** The region a simulated provider signs for when its region variable is unset. */
export const SIMULATOR_AWS_REGION = 'us-east-1';

/** One request about to be sent: its method, full URL, the headers it carries, and its exact body. */
export interface OutgoingRequest { method: string; url: URL; headers: Record<string, string>; body: string | Uint8Array | null }

/**
 * The headers that sign `request` (authorization, x-amz-date, x-amz-content-sha256 and, with a session
 * token, x-amz-security-token), with `key` the secret access key (none: the simulator's, when simulated).
 * Null when there is nothing to sign with (a real provider whose pool has no usable key).
 */
export function sigV4Headers(auth: CompiledSigV4, key: PoolKey | null, request: OutgoingRequest, now: Date = new Date()): Record<string, string> | null {
  const credentials: AwsCredentials | null = key
    ? { accessKeyId: auth.accessKeyId, secretAccessKey: key.value, ...(auth.sessionToken ? { sessionToken: auth.sessionToken } : {}) }
    : auth.simulated ? SIMULATOR_AWS_CREDENTIALS : null;
  if (!credentials) return null;
  return signV4({ method: request.method, url: request.url, headers: request.headers, body: request.body ?? '' }, credentials, auth.region, auth.service, now);
}
