/**
 * The S3 blob store: any S3-compatible bucket (AWS, MinIO, R2, s3rver in tests) through
 * @aws-sdk/client-s3. Clients upload straight to the bucket with presigned PUT URLs.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobExistsError, BlobTooLargeError, type BlobStore, type ByteRange, type UploadGrant, type UploadTarget } from './types.js';

/** Where the bucket is and how to reach it. */
export interface S3BlobStoreOptions {
  /** A custom endpoint (MinIO, R2, s3rver); absent: AWS itself. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** `http://host/bucket/key` instead of `http://bucket.host/key` (most non-AWS servers need it). */
  forcePathStyle: boolean;
  /** Absent: the SDK's default chain (environment, profile, instance role...). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** A BlobStore over one S3 bucket; keys are object keys as they are. */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly describe: string;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(opts: S3BlobStoreOptions) {
    this.bucket = opts.bucket;
    this.describe = `s3://${opts.bucket} at ${opts.endpoint ? withoutUserInfo(opts.endpoint) : `AWS ${opts.region}`}`;
    this.client = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      // Recent SDKs add CRC32 checksums to every PutObject by default. Presigned PUTs would then carry
      // the checksum of an empty body (refused on upload), and several S3-compatible servers reject
      // the headers. We send checksums only where an operation requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /**
   * PutObject needs the length up front (S3 refuses chunked uploads of unknown length without the
   * multipart API), so the body is counted and buffered in memory up to `maxBytes`, then sent in one
   * request. That is fine for the sizes the gateway accepts through itself (tens of MiB at most);
   * larger files go straight to the bucket with `uploadTarget`.
   *
   * `exclusive`: a HeadObject first, then PutObject with `If-None-Match: *`. AWS S3 (since 2024) and
   * MinIO honour the condition atomically (412, or 409 for a concurrent conditional write). Servers
   * that ignore it (s3rver, older Ceph) only get the HeadObject check, which leaves a window between
   * the HEAD and the PUT in which a concurrent writer can be overwritten.
   */
  async write(key: string, body: Readable, opts: { maxBytes: number; contentType?: string; exclusive?: boolean }): Promise<number> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    await pipeline(
      body,
      new Transform({
        transform(chunk: Buffer | string, _enc, done) {
          const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          bytes += buf.length;
          done(bytes > opts.maxBytes ? new BlobTooLargeError(opts.maxBytes) : null, buf);
        },
      }),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          chunks.push(chunk);
          done();
        },
      }),
    );
    if (opts.exclusive && (await this.size(key)) !== null) throw new BlobExistsError(key);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: Buffer.concat(chunks, bytes),
          ContentLength: bytes,
          ContentType: opts.contentType,
          ...(opts.exclusive ? { IfNoneMatch: '*' } : {}),
        }),
      );
    } catch (err) {
      const status = statusOf(err);
      if (opts.exclusive && (status === 412 || status === 409)) throw new BlobExistsError(key);
      throw err;
    }
    return bytes;
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const Range = range ? `bytes=${range.start}-${range.end}` : undefined;
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range }));
      // In Node the SDK's Body is the http.IncomingMessage (a Readable) with helper methods mixed in.
      if (!(out.Body instanceof Readable)) throw new Error(`GetObject ${key}: the body is not a Node stream.`);
      return out.Body;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.ContentLength ?? 0;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for an absent key too.
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const item of out.Contents ?? []) if (item.Key !== undefined) keys.push(item.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** A PutObject is atomic and multipart uploads are never started, so nothing partial is left. */
  async sweepPartial(_olderThan: Date): Promise<number> {
    return 0;
  }

  /**
   * A presigned PUT whose signature covers `content-type` and `content-length` (the presigner leaves
   * content-type unsigned unless asked), so S3 refuses another type or size. The client must send the
   * returned content-type header; content-length is set by any HTTP client from the body itself.
   */
  async uploadTarget(grant: UploadGrant): Promise<UploadTarget | null> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: grant.key,
      ContentType: grant.contentType,
      ContentLength: grant.byteSize,
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: secondsUntil(grant.expiresAt),
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return { url, method: 'PUT', headers: { 'content-type': grant.contentType } };
  }

  async readUrl(key: string, expiresAt: Date): Promise<string | null> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: key });
    return getSignedUrl(this.client, command, { expiresIn: secondsUntil(expiresAt) });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/** Whole seconds from now until `at`, at least 1 (a signature needs a positive lifetime). */
function secondsUntil(at: Date): number {
  return Math.max(1, Math.floor((at.getTime() - Date.now()) / 1000));
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** An absent key. GetObject says NoSuchKey; HeadObject has no error body, so the SDK only says NotFound. */
function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string } | null)?.name;
  if (name === 'NoSuchBucket') return false;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(err) === 404;
}

/** The endpoint for display, without any `user:password@` part. */
function withoutUserInfo(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return '(invalid endpoint)';
  }
}
