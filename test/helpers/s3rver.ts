/**
 * s3rver (an S3 API on a folder) in this process, on 127.0.0.1 with a free port, a temp folder and one
 * bucket: the S3 blob store's stand-in for AWS in tests. Two quirks the tests must know:
 * - it checks the access key and the expiry of V4 presigned URLs but never the signature, so a
 *   presigned PUT with another content type or length is accepted (AWS answers 403);
 * - its ListObjectsV2 continuation tokens use DES, which OpenSSL 3 refuses without the legacy
 *   provider: a listing past one page (1,000 keys) answers 500 in this process (test/files/blob/s3.test.ts
 *   runs a second s3rver in a child process for that case).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3BlobStore } from '../../src/files/blob/s3.js';

/** The part of s3rver's API used here. s3rver ships no type declarations, hence require(). */
interface S3rverServer {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverOptions = { silent: boolean; directory: string; address: string; port: number; configureBuckets: { name: string }[] };
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: S3rverOptions) => S3rverServer;

/** s3rver's default credentials (it knows this one key pair). */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** A running s3rver. */
export interface TestS3 {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  /** The folder s3rver keeps its objects in. */
  dir: string;
  /** The gateway's environment for GATEWAY_BLOB_STORE=s3 on this bucket. */
  gatewayEnv: Record<string, string>;
  /** A fresh S3BlobStore on the bucket (close it when done): a view of the bucket independent of any gateway. */
  store(): S3BlobStore;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** Starts s3rver on 127.0.0.1:0 with a temp folder and the bucket `bucket`. */
export async function startS3rver(bucket = 'gateway-files'): Promise<TestS3> {
  const dir = await mkdtemp(join(tmpdir(), 's3rver-'));
  const server = new S3rver({ silent: true, directory: dir, address: '127.0.0.1', port: 0, configureBuckets: [{ name: bucket }] });
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const region = 'us-east-1';
  return {
    endpoint, bucket, dir,
    gatewayEnv: {
      GATEWAY_BLOB_STORE: 's3', S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: region, S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
    store: () => new S3BlobStore({ endpoint, bucket, region, forcePathStyle: true, credentials: { ...S3RVER_CREDENTIALS } }),
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
