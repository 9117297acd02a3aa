/** Zip containers: inspectZip's bomb bounds and refusals, and verifyOfficePackage's structure checks. */
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { verifyOfficePackage } from '../../../src/files/verify/package.js';
import { DEFAULT_ZIP_BOUNDS, inspectZip } from '../../../src/files/verify/zip.js';

const MiB = 1024 * 1024;
const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/files/${name}`, import.meta.url));

interface StoredEntry {
  name: string;
  data: string | Buffer;
  /** General-purpose bit flags (bit 0: encrypted). */
  flags?: number;
  /** A lying uncompressed size for the headers. */
  declaredSize?: number;
}

/** A zip of stored (uncompressed) entries, written byte by byte so tests control every field. */
function storedZip(entries: StoredEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data, 'utf8');
    const fields = (head: Buffer, at: number): void => {
      head.writeUInt16LE(20, at); // version needed
      head.writeUInt16LE((entry.flags ?? 0) | 0x800, at + 2); // bit 11: UTF-8 names
      head.writeUInt16LE(0, at + 4); // method: stored
      head.writeUInt32LE(0x00210000, at + 6); // 1980-01-01 00:00
      head.writeUInt32LE(crc32(data), at + 10);
      head.writeUInt32LE(data.length, at + 14);
      head.writeUInt32LE(entry.declaredSize ?? data.length, at + 18);
      head.writeUInt16LE(name.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

describe('inspectZip', () => {
  it('lists the entries of a plain zip and keeps only the entries asked for', async () => {
    const result = await inspectZip(fixture('sample.zip'), DEFAULT_ZIP_BOUNDS, { keep: ['hello.txt'] });
    expect(result.ok && result.names).toEqual(['hello.txt']);
    expect(result.ok && result.entries.get('hello.txt')?.toString('utf8')).toBe('Hello from a plain zip.\n');
    const docx = await inspectZip(fixture('sample.docx'), {}, { keep: ['[Content_Types].xml'] });
    expect(docx.ok && [...docx.entries.keys()]).toEqual(['[Content_Types].xml']);
    expect(docx.ok && docx.names).toEqual(['[Content_Types].xml', '_rels/.rels', 'word/document.xml']);
  });

  it('stops the bomb on the ratio bound long before inflating its 300 MiB', async () => {
    const bomb = fixture('bomb.zip');
    const result = await inspectZip(bomb, DEFAULT_ZIP_BOUNDS);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/zeros\.bin inflates more than 200 times its compressed size/);
    // One inflate chunk (16 KiB) past the bound at most: 200 x the ~300 KB compressed size, not 300 MiB.
    expect(result.inflatedBytes).toBeGreaterThan(200 * 300_000);
    expect(result.inflatedBytes).toBeLessThanOrEqual(200 * bomb.length + 64 * 1024);
  });

  it('stops the bomb on the total inflated bound, counting what it inflates', async () => {
    const result = await inspectZip(fixture('bomb.zip'), { maxTotalInflatedBytes: 2 * MiB, maxRatio: 1e9 });
    expect(!result.ok && result.reason).toBe(`The zip archive inflates to more than ${2 * MiB} bytes.`);
    expect(result.inflatedBytes).toBeGreaterThan(2 * MiB);
    expect(result.inflatedBytes).toBeLessThanOrEqual(2 * MiB + 64 * 1024);
  });

  it('refuses an archive with more entries than allowed, before inflating any', async () => {
    const zip = storedZip(['a', 'b', 'c', 'd', 'e'].map((name) => ({ name: `${name}.txt`, data: name })));
    const tooMany = await inspectZip(zip, { maxEntries: 4 });
    expect(!tooMany.ok && tooMany.reason).toBe('The zip archive lists 5 entries, more than the 4 allowed.');
    expect(tooMany.inflatedBytes).toBe(0);
    expect((await inspectZip(zip, { maxEntries: 5 })).ok).toBe(true);
  });

  it('does not refuse small entries for their ratio', async () => {
    const zip = storedZip([{ name: 'x.txt', data: 'x' }]);
    expect((await inspectZip(zip, { maxRatio: 0.5 })).ok).toBe(true);
  });

  it.each([
    ['../evil.txt', /escapes the archive/],
    ['docs/../../evil.txt', /escapes the archive/],
    ['docs\\..\\..\\evil.txt', /escapes the archive/],
    ['/etc/passwd', /absolute path/],
    ['C:/evil.txt', /absolute path/],
  ])('refuses the entry name %s', async (name, reason) => {
    const result = await inspectZip(storedZip([{ name: 'ok.txt', data: 'ok' }, { name, data: 'evil' }]));
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('refuses encrypted entries, duplicate names and sizes that do not match the headers', async () => {
    const encrypted = await inspectZip(storedZip([{ name: 'secret.txt', data: 'xxxxxxxxxxxxsecret', flags: 0x1, declaredSize: 6 }]));
    expect(!encrypted.ok && encrypted.reason).toBe('The zip archive contains an encrypted entry.');
    const twice = await inspectZip(storedZip([{ name: 'a.txt', data: 'a' }, { name: 'a.txt', data: 'b' }]));
    expect(!twice.ok && twice.reason).toBe('The zip archive lists the entry a.txt more than once.');
    const lying = await inspectZip(storedZip([{ name: 'a.txt', data: 'abcdef', declaredSize: 2 }]));
    expect(!lying.ok && lying.reason).toMatch(/does not match the size its header declares/);
  });

  it('answers truncated, corrupt and non-zip bytes without throwing', async () => {
    const docx = fixture('sample.docx');
    const cases = [docx.subarray(0, docx.length >> 1), docx.subarray(0, docx.length - 10), docx.subarray(0, 30), Buffer.alloc(0), fixture('sample.png')];
    const middle = Buffer.from(docx);
    middle.fill(0xff, 60, 200); // the first entry's deflate data
    const corrupt = await inspectZip(middle);
    expect(!corrupt.ok && corrupt.reason).toBe('An entry of the zip archive is corrupt or truncated.');
    for (const bytes of cases) {
      const result = await inspectZip(bytes);
      expect(result.ok, `${bytes.length} bytes`).toBe(false);
      expect(!result.ok && result.reason).toMatch(/^(The|An) .*\.$/);
    }
  });
});

describe('verifyOfficePackage', () => {
  const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

  it('accepts the sample pptx (as the skills output labelled ZIP is) with the presentation type', async () => {
    expect(await verifyOfficePackage(fixture('sample.pptx'), 'pptx')).toEqual({ ok: true, contentType: PPTX });
  });

  it('refuses a plain zip, another kind of package, and a bomb', async () => {
    expect(await verifyOfficePackage(fixture('sample.zip'), 'pptx')).toEqual({
      ok: false,
      reason: 'The zip archive has no [Content_Types].xml, so it is not a PowerPoint presentation.',
    });
    expect(await verifyOfficePackage(fixture('sample.docx'), 'pptx')).toEqual({ ok: false, reason: 'The package is a Word document, not a PowerPoint presentation.' });
    const bomb = await verifyOfficePackage(fixture('bomb.zip'), 'pptx');
    expect(!bomb.ok && bomb.reason).toMatch(/inflates more than/);
  });

  const types = (part: string): string =>
    `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    `<Override PartName="${part}" ContentType="${PPTX}.main+xml"/></Types>`;
  const rels = (target: string): string =>
    `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" ` +
    `Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="${target}"/></Relationships>`;

  it('requires the declared main part and the root relationship to it', async () => {
    const good = [
      { name: '[Content_Types].xml', data: types('/ppt/presentation.xml') },
      { name: '_rels/.rels', data: rels('ppt/presentation.xml') },
      { name: 'ppt/presentation.xml', data: '<p:presentation/>' },
    ];
    expect(await verifyOfficePackage(storedZip(good), 'pptx')).toEqual({ ok: true, contentType: PPTX });
    const noPart = await verifyOfficePackage(storedZip(good.slice(0, 2)), 'pptx');
    expect(!noPart.ok && noPart.reason).toBe('The main part /ppt/presentation.xml of a PowerPoint presentation is missing from the package.');
    const noRels = await verifyOfficePackage(storedZip([good[0]!, good[2]!]), 'pptx');
    expect(!noRels.ok && noRels.reason).toBe("The package's _rels/.rels does not point to its main part /ppt/presentation.xml.");
    const elsewhere = await verifyOfficePackage(storedZip([good[0]!, { name: '_rels/.rels', data: rels('ppt/other.xml') }, good[2]!]), 'pptx');
    expect(elsewhere.ok).toBe(false);
    const noMain = await verifyOfficePackage(storedZip([{ name: '[Content_Types].xml', data: '<Types/>' }, good[1]!, good[2]!]), 'pptx');
    expect(!noMain.ok && noMain.reason).toBe("The package's [Content_Types].xml declares no main part of a PowerPoint presentation.");
  });
});
