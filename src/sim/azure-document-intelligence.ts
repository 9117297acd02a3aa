/**
 * Azure AI Document Intelligence in the simulator (spec 4.12; vendor spec
 * `shared/specs/azure/document-intelligence/DocumentIntelligence-2025-09-01.json`, api-version 2025-09-01):
 *
 * - `POST /documentintelligence/documentModels/{prebuilt-read|prebuilt-layout}:analyze?api-version=2025-09-01`
 *   with a JSON `AnalyzeDocumentRequest` (exactly one of `base64Source` and `urlSource`; the simulator
 *   reads no URL and refuses one, so a gateway that passed a client URL on is caught) and the optional
 *   query parameters `pages`, `locale`, `stringIndexType`, `outputContentFormat`, `features`. The bytes
 *   must be a PDF (parsed with pdf-lib: one result page per PDF page, sized in inches), a PNG, JPEG, BMP,
 *   TIFF or HEIF image (one page, sized in pixels where the header tells), or an Office package (one
 *   page); anything else, or a PDF that cannot be parsed, is a 400 `InvalidRequest`/`InvalidContent`.
 *   Answered 202, empty, with an absolute `Operation-Location`.
 * - `GET /documentintelligence/documentModels/{model}/analyzeResults/{resultId}?api-version=2025-09-01`:
 *   the `AnalyzeOperation`, `running` until the job's poll count is reached, then `succeeded` with an
 *   `analyzeResult` (content, pages with lines and words; layout adds paragraphs and one table).
 *
 * Stateless facts: the result id carries what the result needs (model, pages and their size, index
 * type, content format, scripted outcome, creation time; `di_sim_<base64url JSON>`), so any
 * simulator process answers it; only the poll count is kept per id (a forgotten id counts from zero).
 *
 * Scripted outcomes (a simulator convention, never sent by clients of the real vendor): keywords in
 * a PDF's metadata (`pdf.setKeywords([...])`, read back with pdf-lib): `sim:fail` ends the job
 * `failed` with an error; `sim:never` keeps it `running` forever (deadline tests); `sim:polls=N`
 * makes it succeed on poll N (default `DEFAULT_POLLS`); `sim:partial` succeeds with only the first
 * half of the pages (rounded up) and a warning. Faults scope by the name `azure-document-intelligence`
 * (submissions and polls alike); `omit_usage` on a poll answers `succeeded` without `analyzeResult`.
 */
import { PDFDocument } from 'pdf-lib';
import { imageDimensions, imageFormat } from '../files/verify/dimensions.js';
import type { Exchange, SimRoute } from './exchange.js';
import { azureFaultResponse, checkApiVersion, invalidJson, sendAzureError, type SimMatch } from './azure-content-safety.js';
import { sendJsonAnswer, unknownKey } from './native.js';
import { isRecord, type Rec } from './text.js';

export const DI_API_VERSION = '2025-09-01';
export const DI_FAULT_KEY = 'azure-document-intelligence';
export const DI_MODELS = ['prebuilt-read', 'prebuilt-layout'] as const;
/** The poll that first answers `succeeded` unless the document asks for another (`sim:polls=N`). */
export const DEFAULT_POLLS = 2;
const ANALYZE = /^\/documentintelligence\/documentModels\/([^/:]+):analyze$/;
const RESULT = /^\/documentintelligence\/documentModels\/([^/:]+)\/analyzeResults\/([^/]+)$/;
const QUERY = ['api-version', 'pages', 'locale', 'stringIndexType', 'outputContentFormat', 'features', 'queryFields', 'output'];
const INDEX_TYPES = ['textElements', 'unicodeCodePoint', 'utf16CodeUnit'];
const PAGES = /^(\d+(-\d+)?)(,\s*(\d+(-\d+)?))*$/;
const MAX_TRACKED = 1000;

type Model = (typeof DI_MODELS)[number];
type Outcome = 'ok' | 'fail' | 'never' | 'partial';

/** What a result id carries. */
interface SimJob {
  m: Model;
  /** Page numbers analyzed, as ranges (`1-3,5`). */
  pg: string;
  /** The document's page count. */
  t: number;
  /** Page size and unit: [width, height, unit]. */
  d: [number, number, 'inch' | 'pixel'];
  i: string;
  f: 'text' | 'markdown';
  kv: boolean;
  o: Outcome;
  p: number;
  c: number;
}

const encode = (job: SimJob): string => `di_sim_${Buffer.from(JSON.stringify(job)).toString('base64url')}`;

function decode(id: string): SimJob | null {
  if (!id.startsWith('di_sim_')) return null;
  try {
    const job = JSON.parse(Buffer.from(id.slice(7), 'base64url').toString('utf8')) as SimJob;
    return (DI_MODELS as readonly string[]).includes(job.m) && typeof job.pg === 'string' && typeof job.t === 'number' && typeof job.c === 'number' ? job : null;
  } catch { return null; }
}

/** The page numbers of a `pages` range list (`1-3,5`), in order, without repeats. */
export function pageList(ranges: string): number[] {
  const out = new Set<number>();
  for (const part of ranges.split(',')) {
    const [from, to] = part.trim().split('-').map(Number) as [number, number | undefined];
    for (let n = from; n <= (to ?? from) && n - from < 100_000; n++) out.add(n);
  }
  return [...out].sort((a, b) => a - b);
}

/** Page numbers as ranges (`[1,2,3,5]` -> `1-3,5`). */
function rangesOf(pages: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < pages.length;) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++;
    parts.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

interface Document { pages: number; size: SimJob['d']; keywords: string }

const OFFICE_MAGIC = 'PK\x03\x04';

/** The document's pages, size and (PDF) keywords; a string says why the bytes are refused. */
async function readDocument(bytes: Buffer): Promise<Document | string> {
  if (bytes.subarray(0, 1024).includes('%PDF-')) {
    try {
      const pdf = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: true });
      const count = pdf.getPageCount();
      if (count === 0) return 'The PDF has no pages.';
      const { width, height } = pdf.getPage(0).getSize();
      const inches = (points: number) => Math.round((points / 72) * 10_000) / 10_000;
      return { pages: count, size: [inches(width), inches(height), 'inch'], keywords: pdf.getKeywords() ?? '' };
    } catch {
      return 'The file is corrupted or format is unsupported (the PDF could not be parsed).';
    }
  }
  const format = imageFormat(bytes);
  const heif = bytes.subarray(4, 12).toString('latin1').startsWith('ftyphei') || bytes.subarray(4, 12).toString('latin1').startsWith('ftypmif1');
  if (format && format !== 'gif' && format !== 'webp') {
    const size = imageDimensions(bytes);
    return { pages: 1, size: [size?.width ?? 1000, size?.height ?? 1000, 'pixel'], keywords: '' };
  }
  if (heif) return { pages: 1, size: [1000, 1000, 'pixel'], keywords: '' };
  if (bytes.subarray(0, 4).toString('latin1') === OFFICE_MAGIC) return { pages: 1, size: [8.5, 11, 'inch'], keywords: '' };
  return 'The file is corrupted or format is unsupported. Refer to documentation for the list of supported formats.';
}

function outcomeOf(keywords: string): { o: Outcome; p: number } {
  const polls = /sim:polls=(\d+)/.exec(keywords);
  const p = polls ? Math.max(1, Number(polls[1])) : DEFAULT_POLLS;
  if (keywords.includes('sim:fail')) return { o: 'fail', p };
  if (keywords.includes('sim:never')) return { o: 'never', p };
  return { o: keywords.includes('sim:partial') ? 'partial' : 'ok', p };
}

const invalid = (x: Exchange, message: string, inner = 'InvalidParameter') => sendAzureError(x, 400, 'InvalidRequest', 'Invalid request.', { code: inner, message });

/** The query parameters checked against the spec (unknown ones are refused, as a gateway mistake). */
function checkQuery(url: URL): string | null {
  for (const name of url.searchParams.keys()) if (!QUERY.includes(name)) return `Unknown query parameter '${name}'.`;
  const pages = url.searchParams.get('pages');
  if (pages !== null && !PAGES.test(pages)) return "'pages' must be page numbers or ranges, e.g. 1-3,5.";
  const index = url.searchParams.get('stringIndexType');
  if (index !== null && !INDEX_TYPES.includes(index)) return `'stringIndexType' must be one of ${INDEX_TYPES.join(', ')}.`;
  const format = url.searchParams.get('outputContentFormat');
  if (format !== null && format !== 'text' && format !== 'markdown') return "'outputContentFormat' must be text or markdown.";
  return null;
}

async function submit(x: Exchange, url: URL, model: Model): Promise<void> {
  const type = String(x.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type)) return invalid(x, `The simulator takes the JSON AnalyzeDocumentRequest (content type ${type || 'missing'}).`, 'InvalidContentType');
  if (!x.parsed) return invalidJson(x);
  const body = x.body;
  if (!isRecord(body)) return invalid(x, 'The request body must be a JSON object.');
  const extra = unknownKey(body, ['base64Source', 'urlSource']);
  if (extra !== undefined) return invalid(x, `Unknown field '${extra}'.`);
  if ((body.base64Source === undefined) === (body.urlSource === undefined)) return invalid(x, "Exactly one of 'urlSource' and 'base64Source' must be given.");
  if (body.urlSource !== undefined) return invalid(x, 'The simulator reads no URL: send base64Source.', 'InvalidContentSourceFormat');
  const b64 = body.base64Source;
  if (typeof b64 !== 'string' || b64 === '' || b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return invalid(x, "'base64Source' is not valid base64.", 'InvalidBase64Source');
  const queryProblem = checkQuery(url);
  if (queryProblem) return invalid(x, queryProblem);
  const doc = await readDocument(Buffer.from(b64, 'base64'));
  if (typeof doc === 'string') return invalid(x, doc, 'InvalidContent');
  const asked = url.searchParams.get('pages');
  const pages = asked === null ? pageList(`1-${doc.pages}`) : pageList(asked).filter((n) => n <= doc.pages);
  if (pages.length === 0) return invalid(x, `The page range '${asked}' selects none of the document's ${doc.pages} pages.`, 'InvalidContentRange');
  const job: SimJob = {
    m: model, pg: rangesOf(pages), t: doc.pages, d: doc.size, i: url.searchParams.get('stringIndexType') ?? 'textElements',
    f: url.searchParams.get('outputContentFormat') === 'markdown' ? 'markdown' : 'text',
    kv: (url.searchParams.get('features') ?? '').split(',').includes('keyValuePairs'), c: Date.now(), ...outcomeOf(doc.keywords),
  };
  const host = x.headers.host ?? '127.0.0.1';
  x.sendJson(202, undefined, {
    'operation-location': `http://${host}/documentintelligence/documentModels/${model}/analyzeResults/${encode(job)}?api-version=${DI_API_VERSION}`,
    'retry-after': '0',
  });
}

// ---------------------------------------------------------------------------------------------------
// The result

/** Builds `content` line by line, with each line's span (all text here is ASCII: every index type agrees). */
class Content {
  text = '';
  add(line: string): { offset: number; length: number } {
    if (this.text !== '') this.text += '\n';
    const span = { offset: this.text.length, length: line.length };
    this.text += line;
    return span;
  }
}

/** Coordinates to 4 decimals, as the vendor reports them. */
const round = (v: number): number => Math.round(v * 10_000) / 10_000;

/** One page: its lines (two), their words with polygons, in the page's unit. */
function page(job: SimJob, n: number, total: number, content: Content): { page: Rec; lines: string[] } {
  const [width, height, unit] = job.d;
  const step = unit === 'inch' ? 0.5 : 40;
  const lines = [`Page ${n} of ${total}`, `Simulated ${job.m === 'prebuilt-read' ? 'read' : 'layout'} text.`];
  const start = content.text.length + (content.text === '' ? 0 : 1);
  const words: Rec[] = [];
  const pageLines = lines.map((text, row) => {
    const span = content.add(job.f === 'markdown' && row === 0 && job.m === 'prebuilt-layout' ? `# ${text}` : text);
    const y = step * (row + 1);
    let x = step;
    for (const m of text.matchAll(/\S+/g)) {
      const w = round(m[0].length * step * 0.2);
      words.push({ content: m[0], polygon: [x, y, x + w, y, x + w, y + step / 2, x, y + step / 2], confidence: 0.99, span: { offset: span.offset + m.index + (span.length - text.length), length: m[0].length } });
      x = round(x + w + step * 0.2);
    }
    return { content: text, polygon: [step, y, x, y, x, y + step / 2, step, y + step / 2], spans: [span] };
  });
  return {
    page: { pageNumber: n, angle: 0, width, height, unit, words, lines: pageLines, spans: [{ offset: start, length: content.text.length - start }] },
    lines,
  };
}

/** The `analyzeResult` of a finished job. */
function analyzeResult(job: SimJob): Rec {
  const all = pageList(job.pg);
  const numbers = job.o === 'partial' ? all.slice(0, Math.ceil(all.length / 2)) : all;
  const content = new Content();
  const pages: Rec[] = [];
  const paragraphs: Rec[] = [];
  for (const n of numbers) {
    const { page: p, lines } = page(job, n, job.t, content);
    pages.push(p);
    (p.lines as Rec[]).forEach((l, i) => paragraphs.push({ ...(i === 0 ? { role: n === numbers[0] ? 'title' : 'pageHeader' } : {}), content: lines[i], boundingRegions: [{ pageNumber: n, polygon: l.polygon }], spans: l.spans }));
  }
  const result: Rec = {
    apiVersion: DI_API_VERSION, modelId: job.m, stringIndexType: job.i, contentFormat: job.f, content: '', pages,
    ...(job.o === 'partial' ? { warnings: [{ code: 'PartialResult', message: `Only ${numbers.length} of ${all.length} pages were processed (simulated).` }] } : {}),
  };
  if (job.m === 'prebuilt-layout') {
    const first = numbers[0]!;
    const cells = [['Item', 'Pages'], ['Document', String(numbers.length)]].flatMap((row, r) => row.map((text, c) => ({
      ...(r === 0 ? { kind: 'columnHeader' } : {}), rowIndex: r, columnIndex: c, content: text, spans: [content.add(text)],
    })));
    result.paragraphs = paragraphs;
    result.tables = [{ rowCount: 2, columnCount: 2, cells, boundingRegions: [{ pageNumber: first, polygon: [1, 3, 4, 3, 4, 4, 1, 4] }], spans: [{ offset: (cells[0]!.spans[0] as { offset: number }).offset, length: content.text.length - (cells[0]!.spans[0] as { offset: number }).offset }] }];
    result.sections = [{ spans: [{ offset: 0, length: content.text.length }], elements: paragraphs.map((_, i) => `/paragraphs/${i}`) }];
    if (job.kv) {
      const key = content.add('Pages:');
      const value = content.add(String(numbers.length));
      result.keyValuePairs = [{ key: { content: 'Pages:', spans: [key] }, value: { content: String(numbers.length), spans: [value] }, confidence: 0.9 }];
    }
  } else {
    result.paragraphs = paragraphs.map(({ role: _role, ...p }) => p);
  }
  result.content = content.text;
  return result;
}

function operation(job: SimJob, polls: number, omitResult: boolean): Rec {
  const created = new Date(job.c).toISOString();
  const base = { createdDateTime: created, lastUpdatedDateTime: new Date(Math.max(Date.now(), job.c)).toISOString() };
  if (job.o === 'never' || polls < job.p) return { status: polls <= 1 && job.p > 2 ? 'notStarted' : 'running', ...base };
  if (job.o === 'fail') {
    return { status: 'failed', ...base, error: { code: 'InternalServerError', message: 'An unexpected error occurred (simulated: the document asks for sim:fail).', innererror: { code: 'ProcessingFailed', message: 'The simulated analysis failed.' } } };
  }
  return { status: 'succeeded', ...base, ...(omitResult ? {} : { analyzeResult: analyzeResult(job) }) };
}

/** The Document Intelligence routes of one simulator, sharing its poll counts (cleared by `reset`). */
export function createDocumentIntelligenceRoutes(): { match(method: string, url: URL): SimMatch | undefined; reset(): void } {
  const polls = new Map<string, number>();
  const route = (handle: (x: Exchange) => Promise<void>, url: URL): SimRoute => ({
    faultResponse: azureFaultResponse,
    async handle(x) {
      if (!checkApiVersion(x, url, DI_API_VERSION)) return;
      await handle(x);
    },
  });
  const poll = async (x: Exchange, model: string, id: string) => {
    const job = decode(id);
    if (!job || job.m !== model) return sendAzureError(x, 404, 'NotFound', `The analyze result ${id} was not found.`, { code: 'AnalyzeResultNotFound', message: 'Analyze result not found.' });
    const count = (polls.get(id) ?? 0) + 1;
    polls.delete(id);
    if (polls.size >= MAX_TRACKED) polls.delete(polls.keys().next().value!);
    polls.set(id, count);
    await sendJsonAnswer(x, operation(job, count, x.fault.omit_usage === true));
  };
  return {
    match(method, url) {
      const p = url.pathname;
      const analyze = method === 'POST' ? ANALYZE.exec(p) : null;
      if (analyze) {
        const model = decodeURIComponent(analyze[1]!);
        return {
          faultKey: DI_FAULT_KEY,
          route: route(async (x) => {
            if (!(DI_MODELS as readonly string[]).includes(model)) return sendAzureError(x, 404, 'NotFound', `Model '${model}' was not found (the simulator serves ${DI_MODELS.join(', ')}).`, { code: 'ModelNotFound', message: 'The requested model was not found.' });
            await submit(x, url, model as Model);
          }, url),
        };
      }
      const result = method === 'GET' ? RESULT.exec(p) : null;
      if (result) return { faultKey: DI_FAULT_KEY, route: route((x) => poll(x, decodeURIComponent(result[1]!), decodeURIComponent(result[2]!)), url) };
      return undefined;
    },
    reset() { polls.clear(); },
  };
}
