/**
 * Downloads an output a vendor's finished job names by URL (a flex image on the vendor's delivery
 * host): a plain GET with NO credential (the URL is signed by the vendor; the provider's key never
 * goes to a delivery host), no redirect followed (a redirect could leave the allowed hosts), under the
 * provider's timeouts, and at most `maxBytes` read. The caller checks the URL first
 * (src/upstream/vendor-url.ts).
 */
import { request } from 'undici';
import { GatewayError } from '../errors.js';
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
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    // Destroying an unread body makes it emit an abort error: listened to, so it is not an uncaught one.
    response.body.on('error', () => undefined).destroy();
    throw tooLarge(options.maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > options.maxBytes) {
        response.body.destroy();
        throw tooLarge(options.maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw transportError(error);
  }
  return Buffer.concat(chunks, size);
}
