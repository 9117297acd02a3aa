/**
 * Reading a body into memory under a byte bound: the one collector every bounded read uses (a stored
 * blob, a client's raw body or form part, an upstream answer or download), and the one reading of a
 * declared Content-Length. Each caller says what to throw past the bound, so its error keeps its own
 * class, code and wording.
 */
import { finished, type Readable } from 'node:stream';

/** A byte count several reads share (a form's file parts together) and its bound. */
export interface ByteTally {
  used: number;
  readonly maxBytes: number;
}

/** One bounded read. */
export interface BoundedRead {
  /** Most bytes kept; one more is refused with `tooLarge()`. */
  maxBytes: number;
  tooLarge: () => Error;
  /** The sender's declared length (see `declaredLength`): above `maxBytes`, refused before a byte is read. */
  declared?: number | undefined;
  /**
   * What becomes of a refused stream: `destroy` (the default) stops it; `drain` reads and drops the
   * rest, for a client's request (the connection stays usable for the answer) or a form part (the
   * parser goes on to the end).
   */
  rest?: 'destroy' | 'drain';
  /** A shared count this read adds to, checked on every chunk before its own bound, and this read's error past it. */
  shared?: { tally: ByteTally; tooLarge: () => Error };
}

/**
 * The Content-Length `header` as a non-negative integer; undefined when absent or malformed (`abc`,
 * `-1`, `1e3`, a repeated header), so a bad header is never read as a small one: the streamed count
 * still bounds the body.
 */
export function declaredLength(header: string | readonly string[] | null | undefined): number | undefined {
  if (typeof header !== 'string' || !/^\s*\d+\s*$/.test(header)) return undefined;
  const length = Number(header);
  return Number.isSafeInteger(length) ? length : undefined;
}

/** Stops a refused stream as `read.rest` says; a later error (a destroyed body's abort) is listened to, so it is not an uncaught one. */
function stop(stream: Readable, read: BoundedRead): void {
  stream.on('error', () => undefined);
  if (read.rest === 'drain') stream.resume();
  else stream.destroy();
}

/**
 * Collects `stream` into one Buffer: refused with `read.tooLarge()` before reading when the declared
 * length is above `read.maxBytes`, and as soon as more than `read.maxBytes` arrive (with the shared
 * bound's error once the shared count passes its own). A stream error or a premature close rejects
 * with that error, for the caller to map.
 */
export function collectBounded(stream: Readable, read: BoundedRead): Promise<Buffer> {
  if (read.declared !== undefined && read.declared > read.maxBytes) {
    stop(stream, read);
    return Promise.reject(read.tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const onData = (chunk: Buffer | Uint8Array | string): void => {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buffer.length;
      const shared = read.shared;
      if (shared) shared.tally.used += buffer.length;
      const over = shared && shared.tally.used > shared.tally.maxBytes ? shared : size > read.maxBytes ? read : null;
      if (!over) { chunks.push(buffer); return; }
      stream.off('data', onData);
      fail(over.tooLarge());
      stop(stream, read);
    };
    stream.on('data', onData);
    finished(stream, { writable: false }, (error) => {
      if (error) fail(error);
      else if (!settled) { settled = true; resolve(Buffer.concat(chunks, size)); }
    });
  });
}

/** Collects a stored blob's stream, failing past `maxBytes` (a blob larger than its record says). */
export function readAll(stream: Readable, maxBytes: number): Promise<Buffer> {
  return collectBounded(stream, { maxBytes, tooLarge: () => new Error(`blob larger than the expected ${maxBytes} bytes`) });
}
