/**
 * The documents the simulator's Anthropic skills "generate" (src/sim/anthropic-skills.ts): the smallest
 * packages that Office and PDF readers open, built in code (no fixtures): an .xlsx with one sheet, a
 * .docx with one paragraph, a .pptx with one slide (master, layout and theme included, as PowerPoint
 * requires), and a one-page PDF with a correct cross-reference table. Each shows `text` (the first
 * characters of the request's prompt), so the bytes are deterministic per request.
 */
import { zip } from './zip-writer.js';

/** The four document kinds, named as Anthropic names its built-in skills. */
export type OfficeKind = 'xlsx' | 'pptx' | 'pdf' | 'docx';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const NS = {
  ct: 'http://schemas.openxmlformats.org/package/2006/content-types',
  rels: 'http://schemas.openxmlformats.org/package/2006/relationships',
  r: 'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  a: 'http://schemas.openxmlformats.org/drawingml/2006/main',
  p: 'http://schemas.openxmlformats.org/presentationml/2006/main',
  s: 'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
  w: 'http://schemas.openxmlformats.org/wordprocessingml/2006/main',
};
const OFFICE = 'application/vnd.openxmlformats-officedocument';
const REL = `${NS.r}/`;

/** Escapes text for XML character data. */
const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `[Content_Types].xml` with the rels/xml defaults and one override per part. */
function contentTypes(overrides: Record<string, string>): string {
  const items = Object.entries(overrides).map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`).join('');
  return `${XML}<Types xmlns="${NS.ct}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`
    + `<Default Extension="xml" ContentType="application/xml"/>${items}</Types>`;
}

/** A relationships part; each entry is [type suffix, target]; ids are rId1, rId2, ... */
function rels(list: Array<[string, string]>): string {
  const items = list.map(([type, target], i) => `<Relationship Id="rId${i + 1}" Type="${REL}${type}" Target="${target}"/>`).join('');
  return `${XML}<Relationships xmlns="${NS.rels}">${items}</Relationships>`;
}

/** An .xlsx workbook: one sheet with a header row and one row holding `text` and a number. */
export function xlsxSample(text: string): Buffer {
  const cell = (ref: string, value: string) => `<c r="${ref}" t="inlineStr"><is><t>${esc(value)}</t></is></c>`;
  return zip([
    { name: '[Content_Types].xml', data: contentTypes({ '/xl/workbook.xml': `${OFFICE}.spreadsheetml.sheet.main+xml`, '/xl/worksheets/sheet1.xml': `${OFFICE}.spreadsheetml.worksheet+xml` }) },
    { name: '_rels/.rels', data: rels([['officeDocument', 'xl/workbook.xml']]) },
    { name: 'xl/workbook.xml', data: `${XML}<workbook xmlns="${NS.s}" xmlns:r="${NS.r}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>` },
    { name: 'xl/_rels/workbook.xml.rels', data: rels([['worksheet', 'worksheets/sheet1.xml']]) },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: `${XML}<worksheet xmlns="${NS.s}"><sheetData><row r="1">${cell('A1', 'Item')}${cell('B1', 'Amount')}</row>`
        + `<row r="2">${cell('A2', text)}<c r="B2"><v>42</v></c></row></sheetData></worksheet>`,
    },
  ]);
}

/** A .docx document: one paragraph holding `text`. */
export function docxSample(text: string): Buffer {
  return zip([
    { name: '[Content_Types].xml', data: contentTypes({ '/word/document.xml': `${OFFICE}.wordprocessingml.document.main+xml` }) },
    { name: '_rels/.rels', data: rels([['officeDocument', 'word/document.xml']]) },
    { name: 'word/document.xml', data: `${XML}<w:document xmlns:w="${NS.w}"><w:body><w:p><w:r><w:t xml:space="preserve">${esc(text)}</w:t></w:r></w:p></w:body></w:document>` },
  ]);
}

const PML = `xmlns:a="${NS.a}" xmlns:r="${NS.r}" xmlns:p="${NS.p}"`;
const EMPTY_TREE = '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>';
const MASTER_MAP = '<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr>';

/** A theme with the parts PowerPoint requires: 12 colours, major and minor fonts, 3 styles of each kind. */
function theme(): string {
  const srgb = (name: string, hex: string) => `<a:${name}><a:srgbClr val="${hex}"/></a:${name}>`;
  const colours = [['dk1', '000000'], ['lt1', 'FFFFFF'], ['dk2', '1F497D'], ['lt2', 'EEECE1'], ['accent1', '4F81BD'], ['accent2', 'C0504D'],
    ['accent3', '9BBB59'], ['accent4', '8064A2'], ['accent5', '4BACC6'], ['accent6', 'F79646'], ['hlink', '0000FF'], ['folHlink', '800080']];
  const font = '<a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/>';
  const fill = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>';
  const three = (s: string) => s.repeat(3);
  return `${XML}<a:theme xmlns:a="${NS.a}" name="Simulated"><a:themeElements>`
    + `<a:clrScheme name="Simulated">${colours.map(([n, h]) => srgb(n!, h!)).join('')}</a:clrScheme>`
    + `<a:fontScheme name="Simulated"><a:majorFont>${font}</a:majorFont><a:minorFont>${font}</a:minorFont></a:fontScheme>`
    + `<a:fmtScheme name="Simulated"><a:fillStyleLst>${three(fill)}</a:fillStyleLst><a:lnStyleLst>${three(`<a:ln w="9525">${fill}</a:ln>`)}</a:lnStyleLst>`
    + `<a:effectStyleLst>${three('<a:effectStyle><a:effectLst/></a:effectStyle>')}</a:effectStyleLst><a:bgFillStyleLst>${three(fill)}</a:bgFillStyleLst></a:fmtScheme>`
    + '</a:themeElements></a:theme>';
}

/** A .pptx presentation: one slide with a text box holding `text`, on a blank layout of one master. */
export function pptxSample(text: string): Buffer {
  const pml = `${OFFICE}.presentationml`;
  const textBox = '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
    + '<p:spPr><a:xfrm><a:off x="457200" y="457200"/><a:ext cx="8229600" cy="1143000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>'
    + `<p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>${esc(text)}</a:t></a:r></a:p></p:txBody></p:sp>`;
  const clrMap = 'bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"';
  return zip([
    {
      name: '[Content_Types].xml',
      data: contentTypes({
        '/ppt/presentation.xml': `${pml}.presentation.main+xml`, '/ppt/slides/slide1.xml': `${pml}.slide+xml`,
        '/ppt/slideLayouts/slideLayout1.xml': `${pml}.slideLayout+xml`, '/ppt/slideMasters/slideMaster1.xml': `${pml}.slideMaster+xml`,
        '/ppt/theme/theme1.xml': `${OFFICE}.theme+xml`,
      }),
    },
    { name: '_rels/.rels', data: rels([['officeDocument', 'ppt/presentation.xml']]) },
    {
      name: 'ppt/presentation.xml',
      data: `${XML}<p:presentation ${PML}><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>`
        + '<p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>',
    },
    { name: 'ppt/_rels/presentation.xml.rels', data: rels([['slideMaster', 'slideMasters/slideMaster1.xml'], ['slide', 'slides/slide1.xml'], ['theme', 'theme/theme1.xml']]) },
    { name: 'ppt/slides/slide1.xml', data: `${XML}<p:sld ${PML}><p:cSld><p:spTree>${EMPTY_TREE}${textBox}</p:spTree></p:cSld>${MASTER_MAP}</p:sld>` },
    { name: 'ppt/slides/_rels/slide1.xml.rels', data: rels([['slideLayout', '../slideLayouts/slideLayout1.xml']]) },
    { name: 'ppt/slideLayouts/slideLayout1.xml', data: `${XML}<p:sldLayout ${PML} type="blank" preserve="1"><p:cSld name="Blank"><p:spTree>${EMPTY_TREE}</p:spTree></p:cSld>${MASTER_MAP}</p:sldLayout>` },
    { name: 'ppt/slideLayouts/_rels/slideLayout1.xml.rels', data: rels([['slideMaster', '../slideMasters/slideMaster1.xml']]) },
    {
      name: 'ppt/slideMasters/slideMaster1.xml',
      data: `${XML}<p:sldMaster ${PML}><p:cSld><p:spTree>${EMPTY_TREE}</p:spTree></p:cSld><p:clrMap ${clrMap}/>`
        + '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>',
    },
    { name: 'ppt/slideMasters/_rels/slideMaster1.xml.rels', data: rels([['slideLayout', '../slideLayouts/slideLayout1.xml'], ['theme', '../theme/theme1.xml']]) },
    { name: 'ppt/theme/theme1.xml', data: theme() },
  ]);
}

/** A one-page PDF 1.4 (Helvetica, US Letter) showing `text` (non-ASCII characters become `?`). */
export function pdfSample(text: string): Buffer {
  const ascii = text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = `BT /F1 18 Tf 72 720 Td (${ascii}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** The generator of each kind. */
export const OFFICE_SAMPLES: Readonly<Record<OfficeKind, (text: string) => Buffer>> = {
  xlsx: xlsxSample, pptx: pptxSample, pdf: pdfSample, docx: docxSample,
};
