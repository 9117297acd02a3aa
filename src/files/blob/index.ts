/**
 * Picks the blob store from the environment (issue 10 item 1). Only the variables named here are read;
 * credentials stay in the environment and never reach the configuration or the logs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBlobStore } from './local.js';
import type { BlobStore } from './types.js';

export { LocalBlobStore } from './local.js';
export * from './types.js';

/**
 * The blob store named by GATEWAY_BLOB_STORE: `local` (the default) is the folder `<dataDir>/blobs`,
 * or a fresh temp folder removed on close when the gateway runs in memory (`dataDir` null); `s3` reads
 * S3_BUCKET (required), S3_ENDPOINT, S3_REGION (default us-east-1), S3_FORCE_PATH_STYLE (`true`/`1`),
 * and AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY (both, or neither: then the SDK's default chain).
 */
export async function createBlobStore(env: NodeJS.ProcessEnv, dataDir: string | null): Promise<BlobStore> {
  const kind = env.GATEWAY_BLOB_STORE || 'local';
  if (kind === 'local') {
    if (dataDir !== null) return new LocalBlobStore(join(dataDir, 'blobs'));
    return new LocalBlobStore(mkdtempSync(join(tmpdir(), 'gateway-blobs-')), { removeOnClose: true });
  }
  if (kind === 's3') {
    const bucket = env.S3_BUCKET;
    if (!bucket) throw new Error('GATEWAY_BLOB_STORE=s3 needs S3_BUCKET (the bucket name).');
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    // The AWS SDK is loaded only by a gateway that uses S3 (issue 8, memory).
    const { S3BlobStore } = await import('./s3.js');
    return new S3BlobStore({
      endpoint: env.S3_ENDPOINT || undefined,
      bucket,
      region: env.S3_REGION || 'us-east-1',
      forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true' || env.S3_FORCE_PATH_STYLE === '1',
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    });
  }
  throw new Error(`GATEWAY_BLOB_STORE must be "local" or "s3", not ${JSON.stringify(kind)}.`);
}
