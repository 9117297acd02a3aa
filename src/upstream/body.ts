/**
 * Reading an upstream answer's body: bounded, and with its failures named as what they are. Shared
 * by the pipeline's forwards (src/pipeline/forward) and by the services that fetch an upstream's file
 * outside a request (generated files, video outputs). A larger answer than the operation allows is a
 * 502, not billed; a connection lost while the body is read is a broken answer, not an unreachable upstream.
 */
import { GatewayError } from '../errors.js';
import { collectBounded } from '../files/bytes.js';
import { transportError, type UpstreamResponse } from './client.js';

/** The 502 for an answer past the operation's bound (not billed). */
export function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a file larger than ${maxBytes} bytes.`);
}

/**
 * A failure while reading an answer's body (`what`: the answer, or the stream): a lost connection there
 * is a broken answer (502), not an unreachable upstream.
 */
export function bodyError(error: unknown, what: 'answer' | 'stream' = 'answer'): GatewayError {
  const mapped = transportError(error);
  return mapped.code === 'upstream_unavailable' ? new GatewayError('upstream_error', `The upstream ${what} was cut before it completed.`) : mapped;
}

/** Reads at most `maxBytes` of an answer; more is an upstream error (the rest is not read). */
export function readBounded(response: UpstreamResponse, maxBytes: number): Promise<Buffer> {
  return collectBounded(response.body, { maxBytes, tooLarge: () => tooLarge(maxBytes) }).catch((error: unknown) => {
    throw bodyError(error);
  });
}
