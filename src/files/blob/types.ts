/**
 * The blob store behind temporary files, messages-format files and generated outputs (issue 10
 * item 1): a folder under the data directory (`GATEWAY_BLOB_STORE=local`, the default) or an
 * S3-compatible bucket (`s3`). Blob bytes never pass through the SQL store; their metadata does
 * (src/files/records.ts). Keys are opaque, chosen by the gateway (`<kind>/<account>/<file id>`).
 */
import type { Readable } from 'node:stream';

/** Where and how a client uploads one object: exactly this URL, method and headers (spec 4.7 rule 1). */
export interface UploadTarget {
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
}

/** What a write-only upload URL is signed for. */
export interface UploadGrant {
  key: string;
  contentType: string;
  /** The declared size: an upload past it is refused. */
  byteSize: number;
  expiresAt: Date;
}

/** Raised by `write` when the body is larger than allowed; nothing is left behind under the key. */
export class BlobTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The upload is larger than its declared ${limit} bytes.`);
  }
}

/** Raised by `write` with `exclusive` when the key already holds an object. */
export class BlobExistsError extends Error {
  constructor(readonly key: string) {
    super(`An object already exists under ${key}.`);
  }
}

/** An inclusive byte range of an object, as an HTTP `Range: bytes=start-end` names it. */
export interface ByteRange { start: number; end: number }

/** One blob store. */
export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** For the start line and errors: the folder, or the endpoint and bucket (never a secret). */
  readonly describe: string;
  /**
   * Streams `body` into `key`, counting bytes and refusing past `maxBytes` (BlobTooLargeError, and
   * whatever was written is removed). `exclusive`: refuse (BlobExistsError) when the key is taken, so a
   * one-object upload URL cannot replace what it already wrote. Resolves to the bytes written.
   */
  write(key: string, body: Readable, opts: { maxBytes: number; contentType?: string; exclusive?: boolean }): Promise<number>;
  /**
   * The object's bytes as a stream, or null when there is none; with `range`, only bytes `start` to
   * `end` inclusive (the caller has checked them against the size: byte-range playback, spec 4.16).
   */
  read(key: string, range?: ByteRange): Promise<Readable | null>;
  /** The object's size in bytes, or null when there is none. */
  size(key: string): Promise<number | null>;
  /** Removes the object; an absent one is fine (safe to repeat). */
  delete(key: string): Promise<void>;
  /** Every key under `prefix` (cleanup and orphan checks). */
  list(prefix: string): Promise<string[]>;
  /**
   * Removes partial uploads older than `olderThan` that a crashed process left behind (a kill -9
   * during `write`); resolves to how many. Stores that never leave partial objects (S3: a PUT is
   * atomic) resolve to 0.
   */
  sweepPartial(olderThan: Date): Promise<number>;
  /**
   * A write-only URL for one object when the store can sign one itself (S3: a presigned PUT bound
   * to the content type and length); null when the gateway must receive the upload (local store).
   */
  uploadTarget(grant: UploadGrant): Promise<UploadTarget | null>;
  /** A read-only URL for one object valid until `expiresAt` (S3: a presigned GET); null for the local store. */
  readUrl(key: string, expiresAt: Date): Promise<string | null>;
  close(): Promise<void>;
}
