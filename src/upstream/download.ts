/**
 * Downloads an output a vendor's finished job names by URL (a flex image on the vendor's delivery
 * host): a plain GET with NO credential (the URL is signed by the vendor; the provider's key never
 * goes to a delivery host), no redirect followed (a redirect could leave the allowed hosts), under the
 * provider's timeouts, and at most `maxBytes` read. The caller checks the URL first
 * (src/upstream/vendor-url.ts).
 */
import { request } from 'undici';
import { GatewayError } from '../errors.js';
import { collectBounded, declaredLength } from '../files/bytes.js';
import { transportError } from './client.js';

/** What a download needs besides the URL. */
export interface DownloadOptions {
  maxBytes: number;
  signal: AbortSignal;
  timeouts: { headersMs: number; idleMs: number };
}

const tooLarge = (maxBytes: number): GatewayError => new GatewayError('upstream_error', `The upstream provider's output is larger than ${maxBytes} bytes.`);

/** The bytes at `url`; any answer but a 200 with at most `maxBytes` is a 502 (nothing is billed). */
export async function downloadOutput(url: URL, options: DownloadOptions): Promise<Buffer> {
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      method: 'GET', headers: { accept: '*/*' }, signal: options.signal,
      headersTimeout: options.timeouts.headersMs, bodyTimeout: options.timeouts.idleMs,
    });
  } catch (error) {
    throw transportError(error);
  }
  if (response.statusCode !== 200) {
    await response.body.dump().catch(() => undefined);
    throw new GatewayError('upstream_error', `Downloading the upstream provider's output failed (HTTP ${response.statusCode}).`);
  }
  // A declared length past the bound is refused unread; the streamed count bounds the rest.
  return collectBounded(response.body, {
    maxBytes: options.maxBytes, declared: declaredLength(response.headers['content-length']), tooLarge: () => tooLarge(options.maxBytes),
  }).catch((error: unknown) => {
    throw transportError(error);
  });
}
