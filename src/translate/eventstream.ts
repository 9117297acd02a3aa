/**
 * The one AWS event-stream parser (`application/vnd.amazon.eventstream`, issue 32 item 2: Bedrock's
 * ConverseStream), beside the one SSE parser. Incremental: feed it bytes in arbitrary pieces; it yields
 * complete frames, each checked by its two CRC32s. The encoding, as AWS documents it: a 12-byte
 * prelude (total length, headers length, both big-endian uint32, and the prelude's CRC32), the headers,
 * the payload, and the CRC32 of everything before it. A header is a 1-byte name length, the name, a
 * 1-byte value type and the value (types 0-9: true, false, int8, int16, int32, int64, bytes, string,
 * timestamp, uuid). `toSseEvent` gives a frame the shape the stream translators read.
 */
import { crc32 } from 'node:zlib';
import type { SseEvent } from './sse.js';

/** A header value as decoded: booleans, numbers (int8 to int32), bigints (int64), strings, bytes, dates. */
export type HeaderValue = boolean | number | bigint | string | Uint8Array | Date;

/** One decoded frame. */
export interface EventStreamFrame { headers: Record<string, HeaderValue>; payload: Buffer }

/** A frame that failed its checks: the stream is corrupt and cannot be read further. */
export class EventStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventStreamError';
  }
}

const PRELUDE = 12;
const TRAILER = 4;
/** AWS's limits: a message of at most 16 MiB, headers of at most 128 KiB. */
const MAX_MESSAGE = 16 * 1024 * 1024;
const MAX_HEADERS = 128 * 1024;

/** Incremental parser; one per stream. */
export class EventStreamParser {
  private pieces: Buffer[] = [];
  private buffered = 0;

  /**
   * Feeds bytes; returns the frames they completed and, when a frame after them was corrupt, its
   * error (the frames before it are whole and may be used; nothing after it can be read).
   */
  read(bytes: Uint8Array): { frames: EventStreamFrame[]; error?: EventStreamError } {
    const frames: EventStreamFrame[] = [];
    try {
      this.pushInto(bytes, frames);
      return { frames };
    } catch (error) {
      if (error instanceof EventStreamError) return { frames, error };
      throw error;
    }
  }

  /** Feeds bytes; returns the frames they completed. Throws EventStreamError on a corrupt frame. */
  push(bytes: Uint8Array): EventStreamFrame[] {
    const frames: EventStreamFrame[] = [];
    this.pushInto(bytes, frames);
    return frames;
  }

  private pushInto(bytes: Uint8Array, frames: EventStreamFrame[]): void {
    if (bytes.length > 0) {
      this.pieces.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      this.buffered += bytes.length;
    }
    for (;;) {
      if (this.buffered < PRELUDE) return;
      const head = this.peek(PRELUDE);
      const total = head.readUInt32BE(0);
      const headersLength = head.readUInt32BE(4);
      if (crc32(head.subarray(0, 8)) !== head.readUInt32BE(8)) throw new EventStreamError('event-stream prelude checksum mismatch');
      if (total < PRELUDE + TRAILER + headersLength || total > MAX_MESSAGE || headersLength > MAX_HEADERS) {
        throw new EventStreamError(`event-stream frame of impossible size (total ${total}, headers ${headersLength})`);
      }
      if (this.buffered < total) return;
      frames.push(decodeFrame(this.take(total), headersLength));
    }
  }

  /** True when bytes of an unfinished frame are buffered (a stream ending here was cut). */
  pending(): boolean {
    return this.buffered > 0;
  }

  /** The first `n` buffered bytes (joined only as far as needed). */
  private peek(n: number): Buffer {
    if (this.pieces[0]!.length < n) this.pieces = [Buffer.concat(this.pieces)];
    return this.pieces[0]!.subarray(0, n);
  }

  /** Removes and returns the first `n` buffered bytes. */
  private take(n: number): Buffer {
    const all = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces);
    const frame = all.subarray(0, n);
    const rest = all.subarray(n);
    this.pieces = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return frame;
  }
}

function decodeFrame(frame: Buffer, headersLength: number): EventStreamFrame {
  const end = frame.length - TRAILER;
  if (crc32(frame.subarray(0, end)) !== frame.readUInt32BE(end)) throw new EventStreamError('event-stream message checksum mismatch');
  const headers = decodeHeaders(frame.subarray(PRELUDE, PRELUDE + headersLength));
  // A copy: a view would keep the whole read it came in alive.
  return { headers, payload: Buffer.from(frame.subarray(PRELUDE + headersLength, end)) };
}

function decodeHeaders(bytes: Buffer): Record<string, HeaderValue> {
  const headers: Record<string, HeaderValue> = {};
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new EventStreamError('event-stream header runs past its frame');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes[at]!;
    at += 1;
    need(nameLength + 1);
    const name = bytes.toString('utf8', at, at + nameLength);
    at += nameLength;
    const type = bytes[at]!;
    at += 1;
    const fixed = FIXED_SIZES[type];
    if (fixed !== undefined) {
      need(fixed);
      headers[name] = fixedValue(bytes, at, type);
      at += fixed;
    } else if (type === 6 || type === 7) {
      need(2);
      const length = bytes.readUInt16BE(at);
      at += 2;
      need(length);
      headers[name] = type === 7 ? bytes.toString('utf8', at, at + length) : Uint8Array.from(bytes.subarray(at, at + length));
      at += length;
    } else {
      throw new EventStreamError(`event-stream header "${name}" has unknown value type ${type}`);
    }
  }
  return headers;
}

/** The sizes of the fixed-size value types. */
const FIXED_SIZES: Record<number, number> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };

function fixedValue(bytes: Buffer, at: number, type: number): HeaderValue {
  switch (type) {
    case 0: return true;
    case 1: return false;
    case 2: return bytes.readInt8(at);
    case 3: return bytes.readInt16BE(at);
    case 4: return bytes.readInt32BE(at);
    case 5: return bytes.readBigInt64BE(at);
    case 8: return new Date(Number(bytes.readBigInt64BE(at)));
    default: return Uint8Array.from(bytes.subarray(at, at + 16));
  }
}

/** A header value to write: strings (type 7) are what Bedrock sends; the rest for completeness in tests. */
export type EncodableHeader = string | boolean | number | Uint8Array;

/** Encodes one frame (the simulator's and the tests' side): string, boolean, int32 and byte headers. */
export function encodeFrame(headers: Record<string, EncodableHeader>, payload: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const key = Buffer.from(name, 'utf8');
    parts.push(Buffer.from([key.length]), key);
    if (typeof value === 'boolean') parts.push(Buffer.from([value ? 0 : 1]));
    else if (typeof value === 'number') { const b = Buffer.alloc(5); b[0] = 4; b.writeInt32BE(value, 1); parts.push(b); }
    else {
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
      const b = Buffer.alloc(3);
      b[0] = typeof value === 'string' ? 7 : 6;
      b.writeUInt16BE(bytes.length, 1);
      parts.push(b, bytes);
    }
  }
  const headerBytes = Buffer.concat(parts);
  const total = PRELUDE + headerBytes.length + payload.length + TRAILER;
  const prelude = Buffer.alloc(PRELUDE);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, headerBytes, Buffer.from(payload)]);
  const trailer = Buffer.alloc(TRAILER);
  trailer.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([body, trailer]);
}

/**
 * A frame as the stream translators read events: `event` is its `:event-type` (an event) or
 * `:exception-type` prefixed with `exception:` (an exception or error message), `data` its payload text.
 */
export function toSseEvent(frame: EventStreamFrame): SseEvent {
  const kind = frame.headers[':message-type'];
  const name = kind === 'event' || kind === undefined
    ? frame.headers[':event-type']
    : `exception:${String(frame.headers[':exception-type'] ?? frame.headers[':error-code'] ?? 'unknown')}`;
  return { ...(typeof name === 'string' ? { event: name } : {}), data: frame.payload.toString('utf8') };
}
