import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBlobStore } from '../../../src/files/blob/index.js';
import { LocalBlobStore } from '../../../src/files/blob/local.js';
import { BlobExistsError, BlobTooLargeError } from '../../../src/files/blob/types.js';

/** Every file under `dir`, relative, with forward slashes (temp files included). */
function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1).split('\\').join('/'))
    .sort();
}

/** A body delivered in several chunks, as an HTTP request is. */
const body = (s: string, chunk = 3): Readable =>
  Readable.from(Array.from({ length: Math.ceil(s.length / chunk) }, (_, i) => Buffer.from(s.slice(i * chunk, i * chunk + chunk))));

describe('LocalBlobStore', () => {
  let root: string;
  let store: LocalBlobStore;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'blob-local-test-'));
    store = new LocalBlobStore(join(root, 'blobs'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('reads one inclusive byte range', async () => {
    await store.write('range/a', Readable.from([Buffer.from('0123456789')]), { maxBytes: 100 });
    expect(await text((await store.read('range/a', { start: 2, end: 5 }))!)).toBe('2345');
    expect(await text((await store.read('range/a', { start: 9, end: 9 }))!)).toBe('9');
    await store.delete('range/a');
  });

  it('writes, reads, sizes, lists and deletes', async () => {
    expect(await store.write('tmp/acct1/f1', body('hello world'), { maxBytes: 100 })).toBe(11);
    expect(await store.write('tmp/acct1/f2', body(''), { maxBytes: 100 })).toBe(0);
    await store.write('tmp/acct2/f3', body('x'), { maxBytes: 100 });
    await store.write('out/acct1/f4', body('y'), { maxBytes: 100 });

    expect(await text((await store.read('tmp/acct1/f1'))!)).toBe('hello world');
    expect(await store.size('tmp/acct1/f1')).toBe(11);
    expect(await store.size('tmp/acct1/f2')).toBe(0);
    expect(await store.read('tmp/acct1/nope')).toBeNull();
    expect(await store.size('tmp/acct1/nope')).toBeNull();
    expect(await store.read('tmp/acct1')).toBeNull(); // a folder is not an object
    expect(await store.size('tmp')).toBeNull();

    expect(await store.list('')).toEqual(['out/acct1/f4', 'tmp/acct1/f1', 'tmp/acct1/f2', 'tmp/acct2/f3']);
    expect(await store.list('tmp/')).toEqual(['tmp/acct1/f1', 'tmp/acct1/f2', 'tmp/acct2/f3']);
    expect(await store.list('tmp/acct1/')).toEqual(['tmp/acct1/f1', 'tmp/acct1/f2']);
    expect(await store.list('tmp/acct')).toEqual(['tmp/acct1/f1', 'tmp/acct1/f2', 'tmp/acct2/f3']);
    expect(await store.list('tmp/acct1/f1')).toEqual(['tmp/acct1/f1']);
    expect(await store.list('nothing/here/')).toEqual([]);

    await store.delete('tmp/acct1/f1');
    await store.delete('tmp/acct1/f1'); // twice is fine
    await store.delete('never/was/there');
    expect(await store.read('tmp/acct1/f1')).toBeNull();
    await store.delete('tmp/acct1/f2');
    // Empty folders go, up to (not including) the root; non-empty ones stay.
    expect(existsSync(join(root, 'blobs/tmp/acct1'))).toBe(false);
    expect(existsSync(join(root, 'blobs/tmp/acct2'))).toBe(true);
    await store.delete('tmp/acct2/f3');
    await store.delete('out/acct1/f4');
    expect(readdirSync(join(root, 'blobs'))).toEqual([]);
  });

  it('replaces an object without exclusive, refuses with it', async () => {
    await store.write('a/b', body('one'), { maxBytes: 10 });
    await store.write('a/b', body('two!'), { maxBytes: 10 });
    expect(await text((await store.read('a/b'))!)).toBe('two!');
    await expect(store.write('a/b', body('three'), { maxBytes: 10, exclusive: true })).rejects.toBeInstanceOf(BlobExistsError);
    expect(await text((await store.read('a/b'))!)).toBe('two!');
    expect(await store.write('a/c', body('new'), { maxBytes: 10, exclusive: true })).toBe(3);
    expect(allFiles(join(root, 'blobs'))).toEqual(['a/b', 'a/c']);
  });

  it('takes exactly maxBytes and refuses one byte more, leaving nothing behind', async () => {
    expect(await store.write('k/exact', body('0123456789'), { maxBytes: 10 })).toBe(10);
    const over = body('0123456789A');
    const err = await store.write('k/over', over, { maxBytes: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobTooLargeError);
    expect((err as BlobTooLargeError).limit).toBe(10);
    expect(over.destroyed).toBe(true);
    expect(await store.size('k/over')).toBeNull();
    // An oversized replacement keeps the old object; an exclusive one leaves no temp file either.
    await expect(store.write('k/exact', body('x'.repeat(11)), { maxBytes: 10 })).rejects.toBeInstanceOf(BlobTooLargeError);
    await expect(store.write('k/ex', body('x'.repeat(11)), { maxBytes: 10, exclusive: true })).rejects.toBeInstanceOf(BlobTooLargeError);
    await expect(store.write('k/zero', body('x'), { maxBytes: 0 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await store.size('k/exact')).toBe(10);
    expect(allFiles(join(root, 'blobs'))).toEqual(['k/exact']);
  });

  it('removes the temp file when the body fails midway', async () => {
    const failing = new Readable({ read() {} });
    const done = store.write('k/broken', failing, { maxBytes: 100 });
    failing.push('part');
    failing.destroy(new Error('client went away'));
    await expect(done).rejects.toThrow('client went away');
    expect(allFiles(join(root, 'blobs'))).toEqual([]);
  });

  it('never lists a temp file', async () => {
    await store.write('k/a', body('a'), { maxBytes: 10 });
    const slow = new Readable({ read() {} });
    const pending = store.write('k/b', slow, { maxBytes: 10 });
    slow.push('half');
    await new Promise((r) => setTimeout(r, 20));
    expect(allFiles(join(root, 'blobs')).some((f) => f.startsWith('k/b.part-'))).toBe(true);
    expect(await store.list('k/')).toEqual(['k/a']);
    slow.push(null);
    await pending;
    expect(await store.list('k/')).toEqual(['k/a', 'k/b']);
  });

  it('sweeps temp files a crash left behind, only once they are old enough', async () => {
    await store.write('k/kept', body('a'), { maxBytes: 10 });
    const blobs = join(root, 'blobs');
    mkdirSync(join(blobs, 'crashed/acct'), { recursive: true });
    writeFileSync(join(blobs, 'crashed/acct/f.part-0011223344556677'), 'half');
    writeFileSync(join(blobs, 'k/fresh.part-8899aabbccddeeff'), 'half');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(blobs, 'crashed/acct/f.part-0011223344556677'), hourAgo, hourAgo);
    expect(await store.sweepPartial(new Date(Date.now() - 60_000))).toBe(1);
    expect(allFiles(blobs)).toEqual(['k/fresh.part-8899aabbccddeeff', 'k/kept']);
    expect(existsSync(join(blobs, 'crashed'))).toBe(false);
    expect(await store.sweepPartial(new Date(Date.now() + 60_000))).toBe(1);
    expect(allFiles(blobs)).toEqual(['k/kept']);
  });

  it('refuses keys that could leave the folder or are malformed', async () => {
    const bad = ['', '/etc/passwd', '../x', 'a/../../x', 'a/..', 'a\\b', 'a//b', 'a/', './a', 'a/./b', 'C:/x', 'a\0b', 'a/b.part-1'];
    for (const key of bad) {
      await expect(store.write(key, body('x'), { maxBytes: 10 }), key).rejects.toThrow(/Invalid blob key/);
      await expect(store.read(key), key).rejects.toThrow(/Invalid blob key/);
      await expect(store.size(key), key).rejects.toThrow(/Invalid blob key/);
      await expect(store.delete(key), key).rejects.toThrow(/Invalid blob key/);
    }
    await expect(store.list('../')).rejects.toThrow(/Invalid blob key/);
    expect(existsSync(join(root, 'x'))).toBe(false);
  });

  it('signs nothing itself and describes its folder', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    expect(await store.uploadTarget({ key: 'a/b', contentType: 'text/plain', byteSize: 1, expiresAt })).toBeNull();
    expect(await store.readUrl('a/b', expiresAt)).toBeNull();
    expect(store.kind).toBe('local');
    expect(store.describe).toBe(join(root, 'blobs'));
  });
});

describe('createBlobStore', () => {
  it('defaults to <dataDir>/blobs', async () => {
    const store = await createBlobStore({}, '/srv/gateway-data');
    expect(store.kind).toBe('local');
    expect(store.describe).toBe('/srv/gateway-data/blobs');
  });

  it('uses a throwaway temp folder for an in-memory gateway, removed on close', async () => {
    const store = await createBlobStore({ GATEWAY_BLOB_STORE: 'local' }, null);
    expect(store.describe.startsWith(join(tmpdir(), 'gateway-blobs-'))).toBe(true);
    await store.write('a/b', Readable.from([Buffer.from('x')]), { maxBytes: 1 });
    await store.close();
    expect(existsSync(store.describe)).toBe(false);
  });

  it('builds an S3 store from S3_* variables and never shows credentials', async () => {
    const store = await createBlobStore(
      { GATEWAY_BLOB_STORE: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: '1', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'SECRET' },
      null,
    );
    expect(store.kind).toBe('s3');
    expect(store.describe).toBe('s3://files at http://127.0.0.1:9000');
    expect(store.describe).not.toMatch(/AKID|SECRET/);
    await store.close();
  });

  it('names the variable when S3_BUCKET is missing or the store kind is unknown', async () => {
    await expect(createBlobStore({ GATEWAY_BLOB_STORE: 's3' }, null)).rejects.toThrow(/S3_BUCKET/);
    await expect(createBlobStore({ GATEWAY_BLOB_STORE: 'gcs' }, null)).rejects.toThrow(/GATEWAY_BLOB_STORE.*"local" or "s3".*gcs/);
  });
});
