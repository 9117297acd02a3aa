/**
 * The local blob store: one file per key under a folder. Writes land in a temp file beside the final
 * path and are published atomically (link or rename), so a reader never sees half an object and a
 * refused upload leaves nothing behind.
 */
import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { link, mkdir, open, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { BlobExistsError, BlobTooLargeError, type BlobStore, type ByteRange, type UploadGrant, type UploadTarget } from './types.js';

/** Marks an unpublished write; `list` skips such files and keys may not contain it. */
const PART = '.part-';

/** Options of a local store beyond its folder. */
export interface LocalBlobStoreOptions {
  /** Remove the whole folder on `close` (a throwaway folder for an in-memory gateway). */
  removeOnClose?: boolean;
}

/** A BlobStore over a folder: key `a/b/c` is the file `<root>/a/b/c`. */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  readonly describe: string;
  private readonly root: string;

  constructor(root: string, private readonly opts: LocalBlobStoreOptions = {}) {
    this.root = resolve(root);
    this.describe = this.root;
  }

  async write(key: string, body: Readable, opts: { maxBytes: number; contentType?: string; exclusive?: boolean }): Promise<number> {
    const final = this.pathOf(key);
    const temp = `${final}${PART}${randomBytes(8).toString('hex')}`;
    // A body that fails while the file is being opened would otherwise emit 'error' with no listener
    // (an uncaught exception); the loop below still sees the error through the stream's state.
    const ignore = (): void => undefined;
    body.on('error', ignore);
    let bytes = 0;
    try {
      const file = await openCreatingParents(temp);
      try {
        for await (const chunk of body as AsyncIterable<Buffer | string>) {
          const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          bytes += buf.length;
          // Leaving the loop destroys `body`, so the sender stops at the first byte too many.
          if (bytes > opts.maxBytes) throw new BlobTooLargeError(opts.maxBytes);
          await file.write(buf);
        }
        await file.sync();
      } finally {
        await file.close();
      }
      if (opts.exclusive) {
        // link() never replaces an existing name, unlike rename(): the check and the publish are one step.
        await link(temp, final).catch((err: unknown) => {
          throw code(err) === 'EEXIST' ? new BlobExistsError(key) : err;
        });
        await unlink(temp);
      } else {
        await rename(temp, final);
      }
      return bytes;
    } catch (err) {
      body.destroy();
      await rm(temp, { force: true }).catch(() => undefined);
      throw err;
    } finally {
      body.off('error', ignore);
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    const path = this.pathOf(key);
    let file;
    try {
      file = await open(path, 'r');
    } catch (err) {
      if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return null;
      throw err;
    }
    const isFile = await file.stat().then((st) => st.isFile(), () => false);
    if (!isFile) {
      await file.close();
      return null;
    }
    return file.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async size(key: string): Promise<number | null> {
    try {
      const st = await stat(this.pathOf(key));
      return st.isFile() ? st.size : null;
    } catch (err) {
      if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (err) {
      if (code(err) !== 'ENOENT' && code(err) !== 'ENOTDIR') throw err;
    }
    await this.prune(dirname(path));
  }

  async list(prefix: string): Promise<string[]> {
    // `prefix` is a string prefix of keys; walk only the deepest folder it names.
    const cut = prefix.lastIndexOf('/');
    const keys: string[] = [];
    for await (const file of filesUnder(cut < 0 ? this.root : this.pathOf(prefix.slice(0, cut)))) {
      const key = relative(this.root, file).split(sep).join('/');
      if (!basename(file).includes(PART) && key.startsWith(prefix)) keys.push(key);
    }
    return keys.sort();
  }

  /** Removes `.part-` files last modified before `olderThan` (writes a crash interrupted). */
  async sweepPartial(olderThan: Date): Promise<number> {
    let removed = 0;
    for await (const file of filesUnder(this.root)) {
      if (!basename(file).includes(PART)) continue;
      const st = await stat(file).catch(() => null);
      if (st === null || st.mtime >= olderThan) continue;
      await rm(file, { force: true });
      removed++;
      await this.prune(dirname(file));
    }
    return removed;
  }

  async uploadTarget(_grant: UploadGrant): Promise<UploadTarget | null> {
    return null;
  }

  async readUrl(_key: string, _expiresAt: Date): Promise<string | null> {
    return null;
  }

  async close(): Promise<void> {
    if (this.opts.removeOnClose) await rm(this.root, { recursive: true, force: true });
  }

  /** Best effort: removes `dir` and its parents while empty, stopping at the root. */
  private async prune(dir: string): Promise<void> {
    for (; dir !== this.root && dir.startsWith(this.root + sep); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        return;
      }
    }
  }

  /** The file of `key`; throws on any key that could leave the root or collide with a temp file. */
  private pathOf(key: string): string {
    assertKey(key);
    return join(this.root, ...key.split('/'));
  }
}

/** Throws unless `key` is a plain relative path of non-empty, non-dot segments separated by `/`. */
export function assertKey(key: string): void {
  const bad =
    key === '' ||
    key.startsWith('/') ||
    key.includes('\\') ||
    key.includes('\0') ||
    key.includes(PART) ||
    /^[A-Za-z]:/.test(key) ||
    key.split('/').some((s) => s === '' || s === '.' || s === '..');
  if (bad) throw new Error(`Invalid blob key ${JSON.stringify(key)}.`);
}

/** Every regular file under `dir`, depth first; nothing when `dir` does not exist. */
async function* filesUnder(dir: string): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return;
    throw err;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.isFile()) yield full;
  }
}

/** Opens `path` for a fresh write, creating its folders; retries when a concurrent delete prunes them. */
async function openCreatingParents(path: string) {
  for (let attempt = 0; ; attempt++) {
    await mkdir(dirname(path), { recursive: true });
    try {
      return await open(path, 'wx');
    } catch (err) {
      if (code(err) !== 'ENOENT' || attempt >= 3) throw err;
    }
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}
