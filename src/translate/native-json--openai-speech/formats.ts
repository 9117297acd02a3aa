/**
 * The audio formats of OpenAI's createSpeech (`response_format`: mp3, opus, aac, flac, wav, pcm): the
 * media type each is answered with, and how its first bytes are recognised, so an answer that is not
 * the file asked for is the upstream's fault (502, not billed) rather than the client's download.
 */
import { GatewayError } from '../../errors.js';
import { looksLikeMp3 } from '../elevenlabs.js';

/** One format: its media type, how many first bytes its check reads, and the check. */
export interface SpeechFormat { contentType: string; headBytes: number; looksRight(head: Buffer): boolean }

const starts = (magic: string) => (head: Buffer): boolean => head.toString('latin1', 0, magic.length) === magic;

/**
 * The formats by `response_format`. opus is an Ogg stream ("OggS"), aac ADTS frames (a 12-bit sync,
 * layer 00), flac its "fLaC" marker, wav a RIFF/WAVE header; pcm is headerless 24 kHz 16-bit samples
 * (OpenAI's text-to-speech guide): nothing to check.
 */
export const SPEECH_FORMATS: Readonly<Record<string, SpeechFormat>> = {
  mp3: { contentType: 'audio/mpeg', headBytes: 3, looksRight: looksLikeMp3 },
  opus: { contentType: 'audio/opus', headBytes: 4, looksRight: starts('OggS') },
  aac: { contentType: 'audio/aac', headBytes: 2, looksRight: (h) => h.length >= 2 && h[0] === 0xff && (h[1]! & 0xf6) === 0xf0 },
  flac: { contentType: 'audio/flac', headBytes: 4, looksRight: starts('fLaC') },
  wav: { contentType: 'audio/wav', headBytes: 12, looksRight: (h) => starts('RIFF')(h) && h.toString('latin1', 8, 12) === 'WAVE' },
  pcm: { contentType: 'audio/pcm', headBytes: 0, looksRight: () => true },
};

/** The format of a request's `response_format` (mp3 when absent, the route's default). */
export function speechFormat(responseFormat: unknown): SpeechFormat {
  const format = SPEECH_FORMATS[typeof responseFormat === 'string' ? responseFormat : 'mp3'];
  if (!format) throw new GatewayError('unsupported_parameter', `Unsupported response_format ${JSON.stringify(responseFormat)}; supported: ${Object.keys(SPEECH_FORMATS).join(', ')}.`, { param: 'response_format' });
  return format;
}

/** Throws the upstream's 502 when `head` is not the start of a `format` file. */
export function checkSpeechHead(format: SpeechFormat, head: Buffer): void {
  if (!format.looksRight(head)) throw new GatewayError('upstream_error', `The upstream provider sent audio that is not ${format.contentType}.`);
}
