/**
 * What the two ElevenLabs translators share (docs/vendors/elevenlabs.md): the MP3 answer check, the
 * client file it becomes, and the vendor's error shapes (`{detail: [{loc, msg, type}]}` for a 422
 * validation error, `{detail: {status, message}}` otherwise) turned into the gateway's errors.
 */
import { GatewayError } from '../errors.js';
import { wholeFile } from './file-plan.js';
import type { FilePlan, TranslatedFile } from './types.js';
import { mapUpstreamError } from './upstream-error.js';

/** The output_format both operations are asked for: the spec's default, MP3 at 44.1 kHz, 128 kbit/s. */
export const MP3_OUTPUT_FORMAT = 'mp3_44100_128';

/** True when `data` starts like an MP3 file: an ID3v2 tag or an MPEG audio frame sync (11 set bits). */
export function looksLikeMp3(data: Buffer): boolean {
  if (data.length >= 3 && data.toString('latin1', 0, 3) === 'ID3') return true;
  return data.length >= 2 && data[0] === 0xff && (data[1]! & 0xe0) === 0xe0;
}

/**
 * The client's MP3 (sent inline, audio/mpeg), judged by its first three bytes: an answer that is not an
 * MP3 is the upstream's fault (502, not billed). Known from the headers, so it can stream through.
 */
export const MP3_PLAN: FilePlan = {
  contentType: 'audio/mpeg', filename: null, headBytes: 3, tailBytes: 0,
  checkHead(head) {
    if (!looksLikeMp3(head)) throw new GatewayError('upstream_error', 'The upstream provider sent audio that is not an MP3.');
  },
};

/** The client's MP3 of a whole answer (MP3_PLAN's check on its first bytes). */
export function mp3File(data: Buffer): TranslatedFile {
  return wholeFile(MP3_PLAN, data);
}

/** The vendor's message from either error shape, when it has one. */
export function elevenlabsMessage(body: unknown): string | null {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail.slice(0, 2000);
  if (Array.isArray(detail)) {
    const parts = detail.map((d: { loc?: unknown; msg?: unknown }) => {
      const loc = Array.isArray(d?.loc) ? d.loc.filter((l) => l !== 'body').join('.') : '';
      return typeof d?.msg === 'string' ? (loc ? `${loc}: ${d.msg}` : d.msg) : null;
    }).filter((p): p is string => p !== null);
    return parts.length ? parts.join('; ').slice(0, 2000) : null;
  }
  const message = (detail as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 2000) : null;
}

/** An ElevenLabs error answer as the gateway's error (request errors show the vendor's message, nothing else does). */
export function elevenlabsError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  const message = status >= 400 && status < 500 && ![401, 402, 403, 429].includes(status) ? elevenlabsMessage(body) : null;
  return mapUpstreamError(status, message ? { message } : body, headers);
}

/** Refuses a stream: these operations answer one file. */
export function noStream(): never {
  throw new GatewayError('invalid_request', 'This endpoint does not stream.');
}
