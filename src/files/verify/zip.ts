/**
 * Zip container inspection with a zip-bomb bound.
 *
 * Every entry is inflated (yauzl, `validateEntrySizes` on) and counted as it streams; inspection stops,
 * destroying the entry stream and closing the archive, the moment a bound is passed. Header sizes are
 * never trusted alone: the counters decide. Encrypted entries, absolute names and `..` segments are
 * refused. Only the entries the caller asks to keep are held in memory (each at most 1 MiB).
 */
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';

const MiB = 1024 * 1024;

/** Limits on what inflating an archive may cost. */
export interface ZipBounds {
  /** Most entries the archive may list. */
  maxEntries: number;
  /** Most bytes all entries together may inflate to. */
  maxTotalInflatedBytes: number;
  /** Most inflated/compressed ratio of one entry, checked once that entry passes 1 MiB inflated. */
  maxRatio: number;
}

/** The bounds used when a caller gives none: 10,000 entries, 256 MiB inflated, ratio 200. */
export const DEFAULT_ZIP_BOUNDS: Readonly<ZipBounds> = Object.freeze({
  maxEntries: 10_000,
  maxTotalInflatedBytes: 256 * MiB,
  maxRatio: 200,
});

/** Entries smaller than this (inflated) are never refused for their ratio: small files compress well. */
const RATIO_FLOOR_BYTES = 1 * MiB;
/** A kept entry (for example `[Content_Types].xml`) larger than this is refused. */
const MAX_KEPT_ENTRY_BYTES = 1 * MiB;

/** What {@link inspectZip} may be asked to do beyond the bounds. */
export interface InspectOptions {
  /** Entry names (exact) whose inflated bytes are returned in `entries`. */
  keep?: readonly string[];
  /** Largest kept entry (default 1 MiB), e.g. a document's main part read for its text. */
  keepMaxBytes?: number;
}

/**
 * The outcome of {@link inspectZip}. `inflatedBytes` is what was actually inflated before the answer
 * (on failure: before stopping), for logs and for tests that check a bomb was stopped early.
 */
export type ZipInspection =
  | { ok: true; entries: Map<string, Buffer>; names: string[]; inflatedBytes: number }
  | { ok: false; reason: string; inflatedBytes: number };

const ABSOLUTE_NAME = 'The zip archive contains an entry with an absolute path.';
const ESCAPING_NAME = 'The zip archive contains an entry whose path escapes the archive.';
const ENCRYPTED = 'The zip archive contains an encrypted entry.';

/** yauzl and zlib error messages, mapped to one sentence a client can read. First match wins. */
const ERROR_REASONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/end of central directory record signature not found/i, 'The bytes are not a complete zip archive (it may be truncated).'],
  [/absolute path/i, ABSOLUTE_NAME],
  [/invalid relative path|invalid characters in fileName/i, ESCAPING_NAME],
  [/encrypted/i, ENCRYPTED],
  [/unsupported compression method/i, 'The zip archive uses an unsupported compression method.'],
  [/too many bytes|not enough bytes|size mismatch/i, 'An entry of the zip archive does not match the size its header declares.'],
  [/Z_DATA_ERROR|Z_BUF_ERROR|unexpected EOF|unexpected end/i, 'An entry of the zip archive is corrupt or truncated.'],
];

function describe(err: unknown): string {
  const code = err instanceof Error && 'code' in err ? ` ${String(err.code)}` : ''; // zlib errors carry Z_* codes
  const message = (err instanceof Error ? err.message : String(err)) + code;
  return ERROR_REASONS.find(([pattern]) => pattern.test(message))?.[1] ?? 'The zip archive is malformed.';
}

/** A zip starts with a local file header, or (empty archive) with the end of central directory. */
function hasZipSignature(bytes: Buffer): boolean {
  if (bytes.length < 4 || bytes[0] !== 0x50 || bytes[1] !== 0x4b) return false;
  return (bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06);
}

/**
 * Open `bytes` as a zip archive, inflate every entry within `bounds` (missing fields take
 * {@link DEFAULT_ZIP_BOUNDS}), and return the entry names plus the kept entries. Never rejects: every
 * problem, including a malformed or truncated archive, is an `{ok: false, reason}` answer.
 */
export function inspectZip(bytes: Buffer, bounds: Partial<ZipBounds> = {}, options: InspectOptions = {}): Promise<ZipInspection> {
  const limits: ZipBounds = { ...DEFAULT_ZIP_BOUNDS, ...bounds };
  const keep = new Set(options.keep ?? []);
  const names: string[] = [];
  const seen = new Set<string>();
  const entries = new Map<string, Buffer>();
  let inflatedBytes = 0;

  return new Promise((resolve) => {
    let settled = false;
    let archive: ZipFile | undefined;
    const finish = (result: ZipInspection): void => {
      if (settled) return;
      settled = true;
      archive?.close();
      resolve(result);
    };
    const fail = (reason: string): void => finish({ ok: false, reason, inflatedBytes });

    const readBody = (zip: ZipFile, entry: Entry): void => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return fail(describe(err));
        if (settled) return void stream.destroy();
        const kept: Buffer[] | undefined = keep.has(entry.fileName) ? [] : undefined;
        // The compressed size comes from the header, but yauzl keeps it within the archive's real bytes.
        const ratioLimit = limits.maxRatio * Math.max(entry.compressedSize, 1);
        let entryBytes = 0;
        stream.on('error', (e) => fail(describe(e)));
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          entryBytes += chunk.length;
          inflatedBytes += chunk.length;
          let reason: string | undefined;
          if (inflatedBytes > limits.maxTotalInflatedBytes) {
            reason = `The zip archive inflates to more than ${limits.maxTotalInflatedBytes} bytes.`;
          } else if (entryBytes > RATIO_FLOOR_BYTES && entryBytes > ratioLimit) {
            reason = `The zip entry ${entry.fileName} inflates more than ${limits.maxRatio} times its compressed size.`;
          } else if (kept && entryBytes > (options.keepMaxBytes ?? MAX_KEPT_ENTRY_BYTES)) {
            reason = `The zip entry ${entry.fileName} is too large to inspect.`;
          }
          if (reason !== undefined) {
            stream.destroy();
            return fail(reason);
          }
          kept?.push(chunk);
        });
        stream.on('end', () => {
          if (settled) return;
          if (kept) entries.set(entry.fileName, Buffer.concat(kept));
          zip.readEntry();
        });
      });
    };

    const onEntry = (zip: ZipFile, entry: Entry): void => {
      if (settled) return;
      const name = entry.fileName;
      // yauzl already refuses these names; checked again so the rule does not rest on a library default.
      if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return fail(ABSOLUTE_NAME);
      if (name.split(/[/\\]/).includes('..')) return fail(ESCAPING_NAME);
      if (entry.isEncrypted()) return fail(ENCRYPTED);
      if (seen.has(name)) return fail(`The zip archive lists the entry ${name} more than once.`);
      seen.add(name);
      names.push(name);
      readBody(zip, entry);
    };

    if (!hasZipSignature(bytes)) return fail('The bytes are not a zip archive.');
    try {
      yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
        if (err) return fail(describe(err));
        archive = zip;
        zip.on('error', (e) => fail(describe(e)));
        if (zip.entryCount > limits.maxEntries) {
          return fail(`The zip archive lists ${zip.entryCount} entries, more than the ${limits.maxEntries} allowed.`);
        }
        zip.on('entry', (entry: Entry) => onEntry(zip, entry));
        zip.on('end', () => finish({ ok: true, entries, names, inflatedBytes }));
        zip.readEntry();
      });
    } catch (err) {
      fail(describe(err));
    }
  });
}
