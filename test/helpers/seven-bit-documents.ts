/**
 * A DOCX and PDFs whose every byte is below 0x80, for samples that must cross the Prism proxy of the
 * gateway contract intact (test/contract/prism-gateway-routes.test.ts; ../shared/specs/README.md:
 * "Prism in proxy mode corrupts binary request bodies"), like sevenBitWebpContainer in images.ts.
 *
 * The DOCX is a zip of stored (uncompressed) ASCII entries: the three parts an OOXML word-processing
 * package needs. Its binary fields (CRC-32s, sizes, offsets) are made 7-bit by padding each part with
 * trailing white space (allowed after an XML document's root element) until they are, and the central
 * directory's size by one extra field of an unassigned id on the last header. The PDF is written as
 * ASCII text with an exact cross-reference table and no binary comment line. Both are deterministic.
 */
import { crc32 } from '../../src/sim/zip-writer.js';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** True when every byte of the little-endian `value` (of `bytes` bytes) is below 0x80. */
function sevenBit(value: number, bytes: number): boolean {
  for (let i = 0; i < bytes; i++) if (((value >>> (8 * i)) & 0xff) >= 0x80) return false;
  return true;
}

/** A local header and its data, for a stored entry at `offset`. */
function local(name: Buffer, data: Buffer, crc: number): Buffer {
  const head = Buffer.alloc(30);
  head.writeUInt32LE(0x04034b50, 0);
  head.writeUInt16LE(20, 4);
  head.writeUInt16LE(0x0800, 6); // UTF-8 names
  head.writeUInt16LE(0, 8); // stored
  head.writeUInt16LE(0, 10);
  head.writeUInt16LE(0x21, 12); // 1980-01-01
  head.writeUInt32LE(crc, 14);
  head.writeUInt32LE(data.length, 18);
  head.writeUInt32LE(data.length, 22);
  head.writeUInt16LE(name.length, 26);
  return Buffer.concat([head, name, data]);
}

/** The central directory header of a stored entry, with `extra` bytes of extra field. */
function central(name: Buffer, size: number, crc: number, offset: number, extra: Buffer): Buffer {
  const head = Buffer.alloc(46);
  head.writeUInt32LE(0x02014b50, 0);
  head.writeUInt16LE(20, 4);
  head.writeUInt16LE(20, 6);
  head.writeUInt16LE(0x0800, 8);
  head.writeUInt16LE(0, 10);
  head.writeUInt16LE(0, 12);
  head.writeUInt16LE(0x21, 14);
  head.writeUInt32LE(crc, 16);
  head.writeUInt32LE(size, 20);
  head.writeUInt32LE(size, 24);
  head.writeUInt16LE(name.length, 28);
  head.writeUInt16LE(extra.length, 30);
  head.writeUInt32LE(offset, 42);
  return Buffer.concat([head, name, extra]);
}

/** A DOCX of one paragraph holding `text` (ASCII), every byte below 0x80. */
export function sevenBitDocx(text: string): Buffer {
  if (!/^[\x20-\x7e]*$/.test(text) || /[<&>]/.test(text)) throw new Error('sevenBitDocx takes printable ASCII text without markup characters');
  const parts: Array<[string, string]> = [
    ['[Content_Types].xml', `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`],
    ['_rels/.rels', `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`],
    ['word/document.xml', `${XML}<w:document xmlns:w="${W}"><w:body><w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p></w:body></w:document>`],
  ];
  const locals: Buffer[] = [];
  const entries: Array<{ name: Buffer; size: number; crc: number; offset: number }> = [];
  let offset = 0;
  for (const [entryName, xml] of parts) {
    const name = Buffer.from(entryName, 'ascii');
    for (let pad = 0; ; pad++) {
      if (pad > 100_000) throw new Error(`no 7-bit padding found for ${entryName}`);
      const data = Buffer.from(xml + ' '.repeat(pad), 'ascii');
      const crc = crc32(data);
      const next = offset + 30 + name.length + data.length;
      if (!sevenBit(crc, 4) || !sevenBit(data.length, 4) || !sevenBit(next, 4)) continue;
      locals.push(local(name, data, crc));
      entries.push({ name, size: data.length, crc, offset });
      offset = next;
      break;
    }
  }
  const bare = entries.reduce((sum, e) => sum + 46 + e.name.length, 0);
  // An extra field (id 0x7e7e, unassigned; readers skip it) long enough to make the directory's size 7-bit.
  // None, or a whole field: its 4-byte head (id, data length) and spaces, the data length 7-bit too.
  const fits = (n: number): boolean => sevenBit(bare + n, 4) && (n === 0 || (n >= 4 && sevenBit(n - 4, 2)));
  let extraLength = 0;
  while (!fits(extraLength)) extraLength++;
  const extra = extraLength === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x7e, 0x7e]), Buffer.from([(extraLength - 4) & 0xff, (extraLength - 4) >> 8]), Buffer.alloc(extraLength - 4, 0x20)]);
  const directory = Buffer.concat(entries.map((e, i) => central(e.name, e.size, e.crc, e.offset, i === entries.length - 1 ? extra : Buffer.alloc(0))));
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A PDF of `pages` pages, each showing `Page <n>: <text>` (ASCII), every byte below 0x80. */
export function sevenBitPdf(pages: number, text = ''): Buffer {
  const safe = text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, (c) => `\\${c}`);
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`).join(' ')}] /Count ${pages} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  for (let n = 1; n <= pages; n++) {
    const stream = `BT /F1 14 Tf 50 780 Td (Page ${n}${safe ? `: ${safe}` : ''}) Tj ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * (n - 1)} 0 R >>`);
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  }
  let body = '%PDF-1.4\n';
  const offsets = objects.map((object, i) => {
    const at = body.length;
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'ascii');
}
