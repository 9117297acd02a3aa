/**
 * Azure Document Translation's synchronous operation in the simulator (spec
 * `shared/specs/azure/document-translation/DocumentTranslation-2026-03-01.openapi.json`, operation
 * DocumentTranslationOperations_DocumentTranslate; docs/vendors/azure-document-translation.md):
 * `POST /translator/document:translate?api-version=2026-03-01&targetLanguage=..[&sourceLanguage=..]`,
 * multipart/form-data with the file part `document` (required) and optional `glossary` parts.
 *
 * Checks: the api-version (404 otherwise, as Azure answers), an `Ocp-Apim-Subscription-Key` that is
 * not empty when present (the gateway sends none to the simulator), the query parameters the spec
 * defines (targetLanguage required, a language code), exactly one `document` part, typed as a DOCX,
 * whose bytes are a DOCX: a zip holding `[Content_Types].xml` that declares the word-processing main
 * part, and that part. Anything else is a 400 in the Azure.Core error shape (the simulator translates
 * DOCX only, the one format the gateway sends).
 *
 * Answer: the same package with its main part "translated": every non-empty text run (`<w:t>`) gets
 * the prefix `[<targetLanguage>] `, every other entry kept as it is (re-zipped with zip-writer.ts), as
 * `application/octet-stream` (the spec's `produces`), with `x-metered-usage` = SIM_METERED_CHARACTERS:
 * the Unicode code points of the source's text runs that are not white space. That is deliberately
 * not the gateway's own estimate (every code point of the runs, white space included), so the tests
 * can tell that the bill follows the vendor's count. Faults scope by `azure-document-translation`:
 * `omit_usage` drops the header; `error_after_chunks` answers a 200 whose bytes are not a document;
 * `truncate_after_chunks` and `chunk_delay_ms` cut or slow the bytes.
 */
import { Busboy } from '@fastify/busboy';
import type http from 'node:http';
import { inspectZip } from '../files/verify/zip.js';
import { sendBytes, type RawRequest } from './anthropic-files.js';
import { azureFaultResponse, checkApiVersion, sendAzureError, type SimMatch } from './azure-content-safety.js';
import type { Exchange } from './exchange.js';
import { zip, type ZipEntry } from './zip-writer.js';

export const DOCUMENT_TRANSLATION_API_VERSION = '2026-03-01';
export const DOCUMENT_TRANSLATE_PATH = '/translator/document:translate';
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
/** The operation's query parameters in the spec. */
const QUERY = ['api-version', 'sourceLanguage', 'targetLanguage', 'category', 'allowFallback', 'translateTextWithinImage'];
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
/** The largest document the simulator reads (the service's synchronous limit is larger than the gateway's 2 MiB). */
const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
const MAIN_TYPE = /ContentType\s*=\s*["']application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document\.main\+xml["']/;
const TEXT_RUN = /(<w:t(?:\s[^>]*)?>)([^<]*)(<\/w:t>)/g;

interface Part { field: string; filename: string; mimeType: string; data: Buffer }
type Form = { parts: Part[]; fields: string[] } | { error: string };

/** The file parts (and names of text fields) of a multipart body. */
function parseForm(bytes: Buffer, contentType: string | undefined): Promise<Form> {
  return new Promise((resolve) => {
    let parser: ReturnType<typeof Busboy>;
    try { parser = Busboy({ headers: { 'content-type': contentType ?? '' }, limits: { fileSize: MAX_DOCUMENT_BYTES, files: 16, fields: 16 } }); } catch {
      resolve({ error: 'Content-Type must be multipart/form-data with a boundary.' });
      return;
    }
    const parts: Array<Promise<Part>> = [];
    const fields: string[] = [];
    parser.on('field', (name) => { fields.push(name); });
    parser.on('file', (field, stream, filename, _encoding, mimeType) => {
      parts.push(new Promise((done, fail) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => done({ field, filename, mimeType, data: Buffer.concat(chunks) }));
        stream.on('error', fail);
      }));
    });
    parser.on('error', () => resolve({ error: 'The multipart body is malformed.' }));
    parser.on('finish', () => { Promise.all(parts).then((list) => resolve({ parts: list, fields }), () => resolve({ error: 'The multipart body is malformed.' })); });
    parser.end(bytes);
  });
}

/** XML character data decoded (the five predefined entities and numeric references). */
function xmlText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    const lower = name.toLowerCase();
    if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith('#')) return String.fromCodePoint(parseInt(lower.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[lower] ?? whole;
  });
}

/** What the simulator charges for a main part: the code points of its text runs that are not white space. */
export function simMeteredCharacters(documentXml: string): number {
  let total = 0;
  for (const run of documentXml.matchAll(TEXT_RUN)) total += [...xmlText(run[2] ?? '')].filter((c) => !/\s/u.test(c)).length;
  return total;
}

/** The main part with every non-empty text run prefixed `[<language>] ` (the language is a checked code). */
export function simTranslateXml(documentXml: string, language: string): string {
  return documentXml.replace(TEXT_RUN, (whole, open: string, text: string, close: string) => (text === '' ? whole : `${open}[${language}] ${text}${close}`));
}

/** The package's entries in order, or why the bytes are not a DOCX. */
async function readDocx(bytes: Buffer): Promise<{ entries: ZipEntry[]; main: string } | string> {
  const listed = await inspectZip(bytes);
  if (!listed.ok) return `The document is not a DOCX: ${listed.reason}`;
  const read = await inspectZip(bytes, {}, { keep: listed.names, keepMaxBytes: MAX_DOCUMENT_BYTES });
  if (!read.ok) return `The document is not a DOCX: ${read.reason}`;
  const types = read.entries.get('[Content_Types].xml')?.toString('utf8') ?? '';
  const override = [...types.matchAll(/<(?:\w+:)?Override\b[^>]*>/g)].map((m) => m[0]).find((tag) => MAIN_TYPE.test(tag));
  const main = override && /PartName\s*=\s*["']\/?([^"']+)["']/.exec(override)?.[1];
  if (!main || !read.entries.has(main)) return 'The document is not a DOCX: it has no word-processing main document part.';
  return { entries: listed.names.filter((name) => read.entries.has(name)).map((name) => ({ name, data: read.entries.get(name)! })), main };
}

/** The query's problem, if any: an unknown parameter, a missing or malformed language. */
function queryProblem(url: URL): string | undefined {
  const unknown = [...url.searchParams.keys()].find((k) => !QUERY.includes(k));
  if (unknown) return `Unknown query parameter '${unknown}'.`;
  const target = url.searchParams.getAll('targetLanguage');
  if (target.length !== 1 || !LANGUAGE.test(target[0]!)) return "The query parameter 'targetLanguage' is required once, as a language code.";
  const source = url.searchParams.getAll('sourceLanguage');
  if (source.length > 1 || (source.length === 1 && !LANGUAGE.test(source[0]!))) return "The query parameter 'sourceLanguage' must be one language code.";
  return undefined;
}

async function translate(x: Exchange, url: URL, raw: RawRequest): Promise<void> {
  const fail = (message: string, inner = 'InvalidRequest') => sendAzureError(x, 400, 'InvalidRequest', message, { code: inner, message });
  const key = x.headers['ocp-apim-subscription-key'];
  if (key !== undefined && String(key).trim() === '') return sendAzureError(x, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
  const problem = queryProblem(url);
  if (problem) return fail(problem, 'InvalidArgument');
  const form = await parseForm(raw.bytes, x.headers['content-type']);
  if ('error' in form) return fail(form.error);
  if (form.fields.length > 0) return fail(`Unexpected form field '${form.fields[0]}'; the operation takes the file parts document and glossary.`);
  const unknown = form.parts.find((p) => p.field !== 'document' && p.field !== 'glossary');
  if (unknown) return fail(`Unexpected form part '${unknown.field}'.`);
  const documents = form.parts.filter((p) => p.field === 'document');
  if (documents.length !== 1) return fail("The form must hold exactly one 'document' part.", 'InvalidDocument');
  const document = documents[0]!;
  if (document.mimeType !== DOCX_TYPE) return fail(`The 'document' part's type '${document.mimeType}' is not supported by the simulator; send ${DOCX_TYPE}.`, 'UnsupportedMediaType');
  const docx = await readDocx(document.data);
  if (typeof docx === 'string') return fail(docx, 'InvalidDocument');
  const language = url.searchParams.get('targetLanguage')!;
  const source = docx.entries.find((e) => e.name === docx.main)!.data.toString();
  const out = zip(docx.entries.map((e) => (e.name === docx.main ? { name: e.name, data: simTranslateXml(source, language) } : e)));
  const headers: http.OutgoingHttpHeaders = {
    'content-type': 'application/octet-stream',
    ...(x.headers['x-ms-client-request-id'] ? { 'x-ms-client-request-id': String(x.headers['x-ms-client-request-id']) } : {}),
    'total-image-scans-succeeded': '0', 'total-image-scans-failed': '0',
    ...(x.fault.omit_usage ? {} : { 'x-metered-usage': String(simMeteredCharacters(source)) }),
  };
  // A malformed answer (fault error_after_chunks): a 200 whose bytes are not a document.
  if (x.fault.error_after_chunks !== undefined) return sendBytes(raw.sink, {}, Buffer.from('{"error": {"code": "simulated'), headers);
  await sendBytes(raw.sink, x.fault, out, headers);
}

/** `POST /translator/document:translate` (`?api-version=2026-03-01`), over the request's raw bytes. */
export function matchDocumentTranslation(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST' || url.pathname !== DOCUMENT_TRANSLATE_PATH) return undefined;
  return {
    faultKey: 'azure-document-translation',
    route: {
      faultResponse: azureFaultResponse,
      async handle(x) {
        if (!checkApiVersion(x, url, DOCUMENT_TRANSLATION_API_VERSION)) return;
        await translate(x, url, raw);
      },
    },
  };
}
