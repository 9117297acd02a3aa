/**
 * OOXML package verification (docx, xlsx, pptx).
 *
 * A package passes when it is a sound zip within the bomb bounds, its `[Content_Types].xml` declares
 * the main part of the expected kind, that part is present, and `_rels/.rels` points its officeDocument
 * relationship at it. The XML is read with two regular expressions over attribute lists: enough to
 * find `Override` and `Relationship` attributes, no XML library needed.
 */
import { inspectZip, type ZipBounds } from './zip.js';

/** The verdict on an upload: the content type to record, or one sentence the client can read. */
export type Verification = { ok: true; contentType: string } | { ok: false; reason: string };

/** The three OOXML document kinds the gateway accepts. */
export type OfficeKind = 'docx' | 'xlsx' | 'pptx';

const OOXML = 'application/vnd.openxmlformats-officedocument';

/** Per kind: the package MIME type, the content type of its main part, and a label for messages. */
export const OFFICE_TYPES: Readonly<Record<OfficeKind, { mime: string; main: string; label: string }>> = {
  docx: { mime: `${OOXML}.wordprocessingml.document`, main: `${OOXML}.wordprocessingml.document.main+xml`, label: 'a Word document' },
  xlsx: { mime: `${OOXML}.spreadsheetml.sheet`, main: `${OOXML}.spreadsheetml.sheet.main+xml`, label: 'an Excel workbook' },
  pptx: { mime: `${OOXML}.presentationml.presentation`, main: `${OOXML}.presentationml.presentation.main+xml`, label: 'a PowerPoint presentation' },
};

/** The OOXML kind whose package MIME type is `mime`, if any. */
export function officeKindOf(mime: string): OfficeKind | undefined {
  return (Object.keys(OFFICE_TYPES) as OfficeKind[]).find((kind) => OFFICE_TYPES[kind].mime === mime);
}

const CONTENT_TYPES = '[Content_Types].xml';
const ROOT_RELS = '_rels/.rels';

/** Attribute maps of every `<Name ...>` element (any namespace prefix) in `xml`. */
function elements(xml: string, name: string): Map<string, string>[] {
  const found: Map<string, string>[] = [];
  for (const tag of xml.matchAll(new RegExp(`<(?:[\\w.-]+:)?${name}\\b([^>]*)>`, 'g'))) {
    const attributes = new Map<string, string>();
    for (const [, key, , value] of (tag[1] ?? '').matchAll(/([\w:.-]+)\s*=\s*(["'])(.*?)\2/g)) {
      if (key !== undefined && value !== undefined) attributes.set(key, value.trim());
    }
    found.push(attributes);
  }
  return found;
}

/** XML text of a kept part: UTF-16 when it has a UTF-16 byte-order mark, UTF-8 otherwise. */
function text(bytes: Buffer): string {
  const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : undefined;
  return new TextDecoder(utf16 ?? 'utf-8').decode(bytes);
}

/** A part name as a zip entry name: no leading slash or `./`, ASCII case folded (OPC compares that way). */
function partKey(name: string): string {
  return name.replace(/^\.?\//, '').toLowerCase();
}

/**
 * Verify that `bytes` are an OOXML package of kind `expected` (used for OOXML uploads and for a skills
 * `.pptx` output labelled as ZIP). On success the content type is the standard MIME type of `expected`.
 */
export async function verifyOfficePackage(bytes: Buffer, expected: OfficeKind, bounds: Partial<ZipBounds> = {}): Promise<Verification> {
  const want = OFFICE_TYPES[expected];
  const zip = await inspectZip(bytes, bounds, { keep: [CONTENT_TYPES, ROOT_RELS] });
  if (!zip.ok) return { ok: false, reason: zip.reason };

  const typesXml = zip.entries.get(CONTENT_TYPES);
  if (typesXml === undefined) return { ok: false, reason: `The zip archive has no ${CONTENT_TYPES}, so it is not ${want.label}.` };
  const overrides = elements(text(typesXml), 'Override');
  const overrideOf = (type: string): Map<string, string> | undefined => overrides.find((o) => o.get('ContentType')?.toLowerCase() === type);
  const main = overrideOf(want.main);
  if (main === undefined) {
    const other = Object.values(OFFICE_TYPES).find((t) => overrideOf(t.main) !== undefined);
    return {
      ok: false,
      reason: other ? `The package is ${other.label}, not ${want.label}.` : `The package's ${CONTENT_TYPES} declares no main part of ${want.label}.`,
    };
  }

  const partName = main.get('PartName') ?? '';
  const names = new Set(zip.names.map(partKey));
  if (partName === '' || !names.has(partKey(partName))) {
    return { ok: false, reason: `The main part ${partName || '(unnamed)'} of ${want.label} is missing from the package.` };
  }
  const relsXml = zip.entries.get(ROOT_RELS);
  const target = relsXml && elements(text(relsXml), 'Relationship').find((r) => /\/officeDocument$/.test(r.get('Type') ?? ''))?.get('Target');
  if (target === undefined || partKey(target) !== partKey(partName)) {
    return { ok: false, reason: `The package's ${ROOT_RELS} does not point to its main part ${partName}.` };
  }
  return { ok: true, contentType: want.mime };
}
