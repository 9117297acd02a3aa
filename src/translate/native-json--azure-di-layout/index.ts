/**
 * The native document analysis request (spec 4.12, POST /v1/documents/analyze) to Azure Document
 * Intelligence's layout model (`POST /documentintelligence/documentModels/prebuilt-layout:analyze
 * ?api-version=2025-09-01`, polled by the engine: the operation's `poll:`). `document` holds the
 * verified input as a data URL (the route's `url_inputs`); it goes as `base64Source`, with `pages`,
 * `locale` and `content_format` (the vendor's `outputContentFormat`) as query parameters.
 *
 * The answer: `content` and its `content_format`, `pages` (as OCR's), `paragraphs` (`{content,
 * role?}`), `tables` (`{row_count, column_count, cells: [{kind, row_index, column_index, row_span,
 * column_span, content}], caption?, page_numbers}`), `key_value_pairs` (`{key, value, confidence}`)
 * and, when the model gives them, `documents` with typed `fields` (`{type, content?, confidence?,
 * value?}`, `value` being the field's typed value: a string, number, boolean, list or map of fields,
 * or an object for currencies and addresses). Spans and bounding regions of the vendor's answer are
 * left out except the tables' pages. `usage.pages`: the pages the vendor reports processed, billed.
 */
import type { Translator, TranslatorOptions } from '../types.js';
import { clientPages, documentIntelligenceTranslator, isRecord, malformed } from '../azure-document-intelligence.js';

type Rec = Record<string, unknown>;
const WHAT = 'document analysis';

const list = (v: unknown): unknown[] => {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw malformed(WHAT);
  return v;
};
const record = (v: unknown): Rec => {
  if (!isRecord(v)) throw malformed(WHAT);
  return v;
};
const optional = <T>(v: T | undefined, key: string): Record<string, T> => (v === undefined ? {} : { [key]: v });

/** The distinct page numbers of `boundingRegions`, in order. */
function pageNumbers(regions: unknown): number[] {
  return [...new Set(list(regions).map((r) => record(r).pageNumber).filter((n): n is number => typeof n === 'number'))].sort((a, b) => a - b);
}

function paragraph(raw: unknown): Rec {
  const p = record(raw);
  if (typeof p.content !== 'string') throw malformed(WHAT);
  return { content: p.content, ...optional(typeof p.role === 'string' ? p.role : undefined, 'role') };
}

function table(raw: unknown): Rec {
  const t = record(raw);
  if (typeof t.rowCount !== 'number' || typeof t.columnCount !== 'number') throw malformed(WHAT);
  const cells = list(t.cells).map((c) => {
    const cell = record(c);
    if (typeof cell.rowIndex !== 'number' || typeof cell.columnIndex !== 'number' || typeof cell.content !== 'string') throw malformed(WHAT);
    // DocumentTableCell defaults: kind "content", rowSpan and columnSpan 1.
    return {
      kind: typeof cell.kind === 'string' ? cell.kind : 'content', row_index: cell.rowIndex, column_index: cell.columnIndex,
      row_span: typeof cell.rowSpan === 'number' ? cell.rowSpan : 1, column_span: typeof cell.columnSpan === 'number' ? cell.columnSpan : 1,
      content: cell.content,
    };
  });
  const caption = isRecord(t.caption) && typeof t.caption.content === 'string' ? t.caption.content : undefined;
  return { row_count: t.rowCount, column_count: t.columnCount, cells, ...optional(caption, 'caption'), page_numbers: pageNumbers(t.boundingRegions) };
}

function keyValuePair(raw: unknown): Rec {
  const pair = record(raw);
  const key = record(pair.key);
  if (typeof key.content !== 'string') throw malformed(WHAT);
  const value = pair.value === undefined ? null : record(pair.value).content;
  if (value !== null && typeof value !== 'string') throw malformed(WHAT);
  return { key: key.content, value, confidence: typeof pair.confidence === 'number' ? pair.confidence : null };
}

/** `camelCase` keys of a small vendor object (currency, address) in snake_case. */
function snakeObject(v: Rec): Rec {
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase(), x]));
}

/** A DocumentField's typed value: `valueArray` and `valueObject` recursively; the field names are the model's, kept as they are. */
function fieldValue(f: Rec): unknown {
  if (f.valueArray !== undefined) return list(f.valueArray).map(field);
  if (f.valueObject !== undefined) return fields(f.valueObject);
  const key = Object.keys(f).find((k) => k.startsWith('value'));
  if (key === undefined) return undefined;
  const value = f[key];
  return isRecord(value) ? snakeObject(value) : value;
}

function field(raw: unknown): Rec {
  const f = record(raw);
  const value = fieldValue(f);
  return {
    type: typeof f.type === 'string' ? f.type : null,
    ...optional(typeof f.content === 'string' ? f.content : undefined, 'content'),
    ...optional(typeof f.confidence === 'number' ? f.confidence : undefined, 'confidence'),
    ...optional(value, 'value'),
  };
}

function fields(raw: unknown): Rec {
  return Object.fromEntries(Object.entries(record(raw)).map(([name, f]) => [name, field(f)]));
}

function analyzedDocument(raw: unknown): Rec {
  const d = record(raw);
  if (typeof d.docType !== 'string') throw malformed(WHAT);
  return { doc_type: d.docType, confidence: typeof d.confidence === 'number' ? d.confidence : null, fields: d.fields === undefined ? {} : fields(d.fields) };
}

/** Creates the document analysis translator for one request; a malformed input or an image out of the vendor's sizes is a 400 naming `document`. */
export function createNativeJsonToAzureDiLayout(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  return documentIntelligenceTranslator(clientBody, 'document', WHAT, (result, clientModel) => {
    const { pages, count } = clientPages(result, WHAT);
    const documents = list(result.documents).map(analyzedDocument);
    const body: Rec = {
      object: 'document.analysis', model: clientModel,
      content: result.content, content_format: typeof result.contentFormat === 'string' ? result.contentFormat : 'text',
      pages,
      paragraphs: list(result.paragraphs).map(paragraph),
      tables: list(result.tables).map(table),
      key_value_pairs: list(result.keyValuePairs).map(keyValuePair),
      // Typed fields only where the model gives them (prebuilt-layout gives none; a custom or
      // prebuilt document model would).
      ...(documents.length > 0 ? { documents } : {}),
      usage: { pages: count },
    };
    return { body, pages: count };
  });
}
