/**
 * The Anthropic Files API in the simulator (docs/vendors/anthropic-files.md; spec
 * `shared/specs/anthropic/openapi.prism.json`, paths `/v1/files`, `/v1/files/{file_id}`,
 * `/v1/files/{file_id}/content`): upload (multipart, part `file`), list (newest first, `limit`,
 * `before_id`, `after_id`), metadata, delete and download. Every call needs `anthropic-version` and
 * `anthropic-beta: files-api-2025-04-14`. Files live in memory (`SimFileStore`, bounded, oldest
 * evicted first) with their bytes; only files the simulator generated itself (skills,
 * anthropic-skills.ts) are `downloadable`. Faults scope by the name `anthropic-files`.
 */
import type http from 'node:http';
import { Busboy } from '@fastify/busboy';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange, StreamSink } from './exchange.js';
import type { SimFault } from './faults.js';
import { anthropicError, anthropicFaultResponse } from './messages-route.js';
import { JSON_PIECES, sendJsonAnswer } from './native.js';
import { bodyHash, type Rec } from './text.js';

/** The beta value the Files API requires. */
export const FILES_BETA = 'files-api-2025-04-14';
/** The name faults scope by: `POST /__sim/faults {model: "anthropic-files", fault}`. */
export const FILES_FAULT_KEY = 'anthropic-files';
/** Largest file Anthropic accepts (500 MB, Files API docs). */
export const MAX_FILE_BYTES = 500 * 1024 * 1024;
/** Bytes all stored files may hold together before the oldest are evicted. */
export const FILES_STORE_MAX_BYTES = 500 * 1024 * 1024;
const MULTIPART_OVERHEAD = 1024 * 1024;

/** A stored file: its metadata and bytes. */
export interface SimFile {
  id: string; filename: string; mime_type: string; size_bytes: number; created_at: string; downloadable: boolean;
  data: Buffer;
}

/** What a matcher gets besides method and URL: the body bytes and the connection (for binary answers). */
export interface RawRequest { bytes: Buffer; sink: StreamSink }

/** In-memory files, in creation order, holding at most `maxBytes` together (the oldest go first). */
export class SimFileStore {
  private readonly files = new Map<string, SimFile>();
  private used = 0;
  private seq = 0;

  constructor(readonly maxBytes: number = FILES_STORE_MAX_BYTES) {}

  /** Stores a file (evicting the oldest as needed); undefined when it alone exceeds `maxBytes`. */
  add(file: { filename: string; mimeType: string; data: Buffer; downloadable: boolean }): SimFile | undefined {
    if (file.data.length > this.maxBytes) return undefined;
    for (const oldest of this.files.values()) {
      if (this.used + file.data.length <= this.maxBytes) break;
      this.delete(oldest.id);
    }
    const seq = ++this.seq;
    const id = `file_011Sim${seq.toString(36).padStart(6, '0')}${bodyHash(`${seq}\u0000${file.filename}\u0000${file.data.length}`).slice(0, 14)}`;
    const stored: SimFile = {
      id, filename: file.filename, mime_type: file.mimeType, size_bytes: file.data.length,
      created_at: new Date().toISOString(), downloadable: file.downloadable, data: file.data,
    };
    this.files.set(id, stored);
    this.used += stored.size_bytes;
    return stored;
  }

  get(id: string): SimFile | undefined { return this.files.get(id); }

  /** Removes a file; false when there was none. */
  delete(id: string): boolean {
    const file = this.files.get(id);
    if (!file) return false;
    this.files.delete(id);
    this.used -= file.size_bytes;
    return true;
  }

  /** Every file, newest first. */
  list(): SimFile[] { return [...this.files.values()].reverse(); }

  /** Bytes held now. */
  get usedBytes(): number { return this.used; }

  /** Forgets every file and restarts the id sequence. */
  reset(): void { this.files.clear(); this.used = 0; this.seq = 0; }
}

/** The creation sequence encoded in a simulator file id (orders cursors, even for deleted files). */
const seqOf = (id: string): number | undefined => {
  const m = /^file_011Sim([0-9a-z]{6})/.exec(id);
  return m ? parseInt(m[1]!, 36) : undefined;
};

/** `BetaFileMetadataSchema` of a stored file. */
export function fileMetadata(f: SimFile): Rec {
  return { id: f.id, type: 'file', filename: f.filename, mime_type: f.mime_type, size_bytes: f.size_bytes, created_at: f.created_at, downloadable: f.downloadable };
}

/** The values of every `anthropic-beta` header (comma-separated lists and repeated headers). */
export function betas(headers: http.IncomingHttpHeaders): string[] {
  const raw = headers['anthropic-beta'];
  return (Array.isArray(raw) ? raw.join(',') : raw ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');
}

/** Sends an Anthropic error (`{type: "error", error: {type, message, details?}, request_id}`) with its request-id header. */
export function sendAnthropicError(x: Exchange, status: number, type: string, message: string, details?: Rec): void {
  const body = anthropicError(type, message, x.raw);
  if (details) (body.error as Rec).details = details;
  x.sendJson(status, body, { 'request-id': String(body.request_id) });
}

/** False (after a 400) unless the request carries `anthropic-version` and the beta value `beta`. */
export function checkAnthropicHeaders(x: Exchange, beta: string): boolean {
  const problem = x.headers['anthropic-version'] === undefined ? 'anthropic-version: header is required'
    : betas(x.headers).includes(beta) ? undefined : `This endpoint is in beta: send the header \`anthropic-beta: ${beta}\`.`;
  if (problem !== undefined) sendAnthropicError(x, 400, 'invalid_request_error', problem);
  return problem === undefined;
}

/** The body limit of an upload (`POST /v1/files`), or undefined for every other request. */
export function uploadBodyLimit(method: string | undefined, url: string | undefined): number | undefined {
  return method === 'POST' && (url ?? '').split('?')[0] === '/v1/files' ? MAX_FILE_BYTES + MULTIPART_OVERHEAD : undefined;
}

/** Anthropic's 413 body for an upload over the limit. */
export const uploadTooLarge = (): Rec => anthropicError('request_too_large', `Request exceeds the maximum allowed number of bytes (files are limited to ${MAX_FILE_BYTES} bytes).`, '');

type Upload = { filename: string; mimeType: string; data: Buffer } | { error: string };

/** The one `file` part of a multipart body (other text fields are ignored, as a form endpoint does). */
function parseUpload(bytes: Buffer, contentType: string | undefined): Promise<Upload> {
  return new Promise((resolve) => {
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({ headers: { 'content-type': contentType ?? '' }, limits: { fileSize: MAX_FILE_BYTES, files: 8, fields: 64 } });
    } catch {
      resolve({ error: 'Content-Type must be multipart/form-data with a boundary.' });
      return;
    }
    const files: Array<Promise<{ field: string; filename: string; mimeType: string; data: Buffer }>> = [];
    parser.on('file', (field, stream, filename, _encoding, mimeType) => {
      files.push(new Promise((done, fail) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => done({ field, filename, mimeType, data: Buffer.concat(chunks) }));
        stream.on('error', fail);
      }));
    });
    parser.on('error', () => resolve({ error: 'The multipart body is malformed.' }));
    parser.on('finish', () => {
      Promise.all(files).then((all) => {
        const parts = all.filter((f) => f.field === 'file');
        if (parts.length === 0) return resolve({ error: 'file: Field required' });
        if (parts.length > 1) return resolve({ error: 'file: expected exactly one file part' });
        const part = parts[0]!;
        if (part.filename.length < 1 || part.filename.length > 500) return resolve({ error: 'file: the filename must be 1 to 500 characters long' });
        const mimeType = (part.mimeType.split(';')[0] ?? '').trim().toLowerCase() || 'application/octet-stream';
        resolve({ filename: part.filename, mimeType, data: part.data });
      }, () => resolve({ error: 'The multipart body is malformed.' }));
    });
    parser.end(bytes);
  });
}

/**
 * Writes `data` as a 200 answer; chunk faults cut it into 4 pieces (truncate: socket destroyed; error:
 * short body; hold_last_chunk: the last piece, or the cut, waits for `POST /__sim/release`).
 */
export async function sendBytes(sink: StreamSink, fault: SimFault, data: Buffer, headers: http.OutgoingHttpHeaders): Promise<void> {
  const { res, isGone, sleep, closed } = sink;
  if (isGone()) return;
  const { truncate_after_chunks: truncate, error_after_chunks: errorAfter, chunk_delay_ms: delay, hold_last_chunk: hold } = fault;
  if (truncate === undefined && errorAfter === undefined && !delay && !hold) {
    res.writeHead(200, { ...headers, 'content-length': data.length });
    res.end(data);
    return;
  }
  const size = Math.max(1, Math.ceil(data.length / JSON_PIECES));
  const pieces = Array.from({ length: JSON_PIECES }, (_, i) => data.subarray(i * size, (i + 1) * size));
  const cut = truncate !== undefined && (errorAfter === undefined || truncate < errorAfter);
  const limit = Math.min(pieces.length, cut ? truncate : errorAfter ?? pieces.length);
  res.writeHead(200, headers);
  for (let i = 0; i < limit; i++) {
    if (delay && i > 0) await sleep(delay);
    if (hold && !cut && i === limit - 1) await Promise.race([sink.released(), closed]);
    if (isGone()) return;
    await Promise.race([new Promise<void>((done) => res.write(pieces[i]!, () => done())), closed]);
  }
  if (hold && cut) await Promise.race([sink.released(), closed]);
  if (isGone()) return;
  if (cut) res.destroy();
  else res.end();
}

/** The `GET /v1/files` page: newest first; `after_id` pages towards older files, `before_id` towards newer. */
function listPage(x: Exchange, store: SimFileStore, query: URLSearchParams, headers: http.OutgoingHttpHeaders): Promise<void> | void {
  const fail = (message: string) => sendAnthropicError(x, 400, 'invalid_request_error', message);
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limitText?.trim() === '') return fail('limit: Input should be a valid integer');
  if (limit < 1 || limit > 1000) return fail(`limit: Input should be ${limit < 1 ? 'greater than or equal to 1' : 'less than or equal to 1000'}`);
  const before = query.get('before_id');
  const after = query.get('after_id');
  if (before !== null && after !== null) return fail('Only one of before_id and after_id may be given.');
  const cursor = before ?? after;
  const at = cursor === null ? undefined : seqOf(cursor);
  if (cursor !== null && at === undefined) return fail(`${before !== null ? 'before_id' : 'after_id'}: invalid file id '${cursor}'`);
  let all = store.list();
  if (query.get('scope_id') !== null) all = []; // the simulator's files have no scope
  const seq = (f: SimFile) => seqOf(f.id)!;
  const pool = before !== null ? all.filter((f) => seq(f) > at!) : after !== null ? all.filter((f) => seq(f) < at!) : all;
  const page = before !== null ? pool.slice(Math.max(0, pool.length - limit)) : pool.slice(0, limit); // before_id: the page next to the cursor
  return sendJsonAnswer(x, { data: page.map(fileMetadata), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: pool.length > limit }, headers);
}

/** The Files API routes over `store`, matched by method and URL. */
export function createFilesRoutes(store: SimFileStore): { match(method: string, url: URL, raw: RawRequest): SimMatch | undefined } {
  let calls = 0;
  const notFound = (x: Exchange, id: string) => sendAnthropicError(x, 404, 'not_found_error', `File not found: ${id}`);

  type Handler = (x: Exchange, headers: http.OutgoingHttpHeaders) => Promise<void> | void;
  const handlerFor = (method: string, url: URL, raw: RawRequest, id: string | undefined, content: boolean): Handler | undefined => {
    if (id === undefined && method === 'GET') return (x, headers) => listPage(x, store, url.searchParams, headers);
    if (id === undefined && method === 'POST') {
      return async (x, headers) => {
        const upload = await parseUpload(raw.bytes, x.headers['content-type']);
        if ('error' in upload) return sendAnthropicError(x, 400, 'invalid_request_error', upload.error);
        const file = store.add({ ...upload, downloadable: false });
        if (!file) return sendAnthropicError(x, 413, 'request_too_large', 'The file is larger than the simulated storage.');
        await sendJsonAnswer(x, fileMetadata(file), headers);
      };
    }
    if (id === undefined) return undefined;
    if (content && method === 'GET') {
      return async (x, headers) => {
        const file = store.get(id);
        if (!file) return notFound(x, id);
        if (!file.downloadable) return sendAnthropicError(x, 400, 'invalid_request_error', 'file is not downloadable', { error_code: 'file_not_downloadable' });
        await sendBytes(raw.sink, x.fault, file.data, { ...headers, 'content-type': file.mime_type });
      };
    }
    if (content) return undefined;
    if (method === 'GET') return (x, headers) => { const file = store.get(id); return file ? sendJsonAnswer(x, fileMetadata(file), headers) : notFound(x, id); };
    if (method === 'DELETE') return (x, headers) => (store.delete(id) ? sendJsonAnswer(x, { id, type: 'file_deleted' }, headers) : notFound(x, id));
    return undefined;
  };

  return {
    match(method, url, raw) {
      const m = /^\/v1\/files(?:\/([^/]+)(\/content)?)?$/.exec(url.pathname);
      if (!m) return undefined;
      let id: string | undefined;
      try { id = m[1] === undefined ? undefined : decodeURIComponent(m[1]); } catch { id = m[1]; }
      const handler = handlerFor(method, url, raw, id, m[2] !== undefined);
      if (!handler) return undefined;
      return {
        faultKey: FILES_FAULT_KEY,
        route: {
          faultResponse: anthropicFaultResponse,
          async handle(x) {
            const headers = { 'request-id': `req_sim${bodyHash(`${method} ${url.pathname}${url.search}\u0000${calls++}`).slice(0, 24)}` };
            if (checkAnthropicHeaders(x, FILES_BETA)) await handler(x, headers);
          },
        },
      };
    },
  };
}
