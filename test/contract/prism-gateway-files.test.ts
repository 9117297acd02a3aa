/**
 * Contract for the file routes (how Prism is used: prism-gateway.test.ts), through `prism proxy
 * --errors` over src/generated/openapi.json, with zero violations per call:
 *  - temporary files: the upload authorization, then the real three steps (authorize, PUT the bytes of
 *    test/fixtures/files/sample.png to the returned upload_url with exactly the returned method and
 *    headers, finalize), a repeated finalize, and the documented errors (unknown id, nothing uploaded);
 *  - messages-format files: upload (multipart, with and without expires_in_seconds), list and its next
 *    page, metadata, the 400 of downloading an upload, the download of a generated file, delete (twice),
 *    and the documented errors (404 after delete, missing version header, unknown key).
 * The upload URL is the gateway's own signed URL, outside the document: the PUT goes to it directly.
 * Coverage: Prism validates a multipart request body (its 422 on a form without `file`), and against a
 * copy of the document whose file schemas each require `no_such_field`, every answer above fails.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callHttp, compilePrismRequestBodies, componentValidator, expectClean, startPrismProxy, stopChild, type Answer } from '../helpers/prism.js';
import { SAMPLE_PNG, seedGeneratedFile, type Authorization } from '../helpers/route-samples.js';

const SPEC = resolve('src/generated/openapi.json');
const doc = JSON.parse(readFileSync(SPEC, 'utf8')) as { components: { schemas: Record<string, any> } };
const VERSION = { 'anthropic-version': '2023-06-01' };
/** The answer schemas of the file routes (the negative control makes each require one more field). */
const FILE_SCHEMAS = ['UploadAuthorization', 'FinalizedFile', 'FileMetadata', 'FileList', 'FileDeleted'];

function expectValid(name: string, value: unknown): void {
  const validate = componentValidator(doc.components, name);
  expect(validate(value), `${JSON.stringify(value)}\n${validate.errorsText()}`).toBe(true);
}

/** A form with the `file` part (and extra text fields). */
function form(bytes: Buffer, filename: string, type: string, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  for (const [name, value] of Object.entries(fields)) f.append(name, value);
  f.append('file', new Blob([new Uint8Array(bytes)], { type }), filename);
  return f;
}

describe.runIf(storeKind === 'pglite')('Prism contract: temporary and messages-format files', () => {
  let t: TestGateway;
  let prism: Awaited<ReturnType<typeof startPrismProxy>>;
  let strictPrism: Awaited<ReturnType<typeof startPrismProxy>>;
  let tmp: string;
  let account: { id: string; key: string };

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('0'); // every file route is free: a zero balance is enough
    tmp = mkdtempSync(join(tmpdir(), 'gw-prism-files-'));
    const strict = structuredClone(doc);
    for (const name of FILE_SCHEMAS) strict.components.schemas[name].required.push('no_such_field');
    writeFileSync(join(tmp, 'strict.json'), JSON.stringify(strict));
    [prism, strictPrism] = await Promise.all([startPrismProxy(SPEC, t.url), startPrismProxy(join(tmp, 'strict.json'), t.url)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([stopChild(prism?.child), stopChild(strictPrism?.child)]);
    await t?.dispose();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  const authorizeBody = { purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: SAMPLE_PNG.length };
  const authorize = (base: string) => callHttp(base, '/v1/gateway/files/upload-authorizations', { key: account.key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(authorizeBody) });
  const finalize = (base: string, id: string) => callHttp(base, `/v1/gateway/files/${id}/finalize`, { method: 'POST', key: account.key });
  const files = (base: string, path: string, opts: { method?: string; body?: FormData; headers?: Record<string, string>; key?: string } = {}) =>
    callHttp(base, path, { key: opts.key ?? account.key, method: opts.method, body: opts.body, headers: { ...VERSION, ...opts.headers } });
  // Prism's proxy forwards a request body as UTF-8 text (a PNG's high bytes would arrive as U+FFFD): the form carries ASCII text.
  const NOTES = Buffer.from('notes for the contract test\n');
  const upload = (base: string, fields: Record<string, string> = {}) => files(base, '/v1/files', { body: form(NOTES, 'notes.txt', 'text/plain', fields) });

  it('compiles the request bodies of the file routes as Prism does (JSON and multipart)', async () => {
    const bodies = await compilePrismRequestBodies(SPEC, (op) => op.path.startsWith('/v1/files') || op.path.startsWith('/v1/gateway/files'));
    expect(bodies.map((b) => `${b.method} ${b.path} ${b.mediaType}`).sort()).toEqual([
      'POST /v1/files multipart/form-data', 'POST /v1/gateway/files/upload-authorizations application/json',
      // The signed upload URL of the local store (api/service.yaml, issue 33 item 4): raw bytes of any type.
      'PUT /v1/gateway/files/uploads/{id} */*',
    ]);
    expect(bodies.filter((b) => b.error !== null)).toEqual([]);
  });

  it('the upload authorization passes without violations', async () => {
    const res = await authorize(prism.url);
    expectClean(res, 200);
    expectValid('UploadAuthorization', res.json);
    expect(res.json).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png' }, file_id: expect.stringMatching(/^tfile_/) });
  });

  it('authorize, PUT the bytes to the upload URL, finalize: the finalize answer passes, twice, and its errors are documented', async () => {
    // The authorization answer is checked above; here it only hands out the URL.
    const authorized = await authorize(t.url);
    expect(authorized.status, authorized.text).toBe(200);
    const a = authorized.json as Authorization;
    const early = await finalize(prism.url, a.file_id);
    expectClean(early, 400); // nothing uploaded yet
    expect(early.json.error.message).toContain('upload_url');
    const put = await fetch(a.upload_url, { method: a.method, headers: a.headers, body: new Uint8Array(SAMPLE_PNG) });
    expect(put.status, await put.clone().text()).toBe(200);
    const done = await finalize(prism.url, a.file_id);
    expectClean(done, 200);
    expectValid('FinalizedFile', done.json);
    expect(done.json.file_id).toBe(a.file_id);
    const again = await finalize(prism.url, a.file_id);
    expectClean(again, 200);
    expect(again.json).toEqual(done.json);
    const unknown = await finalize(prism.url, 'tfile_000000000000000000000000');
    expectClean(unknown, 404);
    expect(unknown.json.error).toMatchObject({ code: 'file_not_found', type: 'not_found_error' });
  });

  it('upload, list, metadata, download refusal and delete pass without violations', async () => {
    const uploaded = await upload(prism.url);
    expectClean(uploaded, 200);
    expectValid('FileMetadata', uploaded.json);
    expect(uploaded.json).toMatchObject({ type: 'file', filename: 'notes.txt', mime_type: 'text/plain', size_bytes: NOTES.length, downloadable: false });
    const short = await upload(prism.url, { expires_in_seconds: '3600' });
    expectClean(short, 200);
    expect(Date.parse(short.json.expires_at) - Date.parse(short.json.created_at)).toBe(3_600_000);

    const first = await files(prism.url, '/v1/files?limit=1');
    expectClean(first, 200);
    expectValid('FileList', first.json);
    expect(first.json).toMatchObject({ data: [{ id: short.json.id }], has_more: true, next_page: short.json.id });
    const second = await files(prism.url, `/v1/files?limit=1&page=${first.json.next_page}`);
    expectClean(second, 200);
    expect(second.json).toMatchObject({ data: [{ id: uploaded.json.id }], has_more: false, next_page: null });

    const meta = await files(prism.url, `/v1/files/${uploaded.json.id}`);
    expectClean(meta, 200);
    expect(meta.json).toEqual(uploaded.json);
    const download = await files(prism.url, `/v1/files/${uploaded.json.id}/content`);
    expectClean(download, 400); // an upload, not a generated file
    expect(download.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expectValid('MessagesErrorResponse', download.json);

    for (let i = 0; i < 2; i++) {
      const deleted = await files(prism.url, `/v1/files/${uploaded.json.id}`, { method: 'DELETE' });
      expectClean(deleted, 200);
      expectValid('FileDeleted', deleted.json);
      expect(deleted.json).toEqual({ id: uploaded.json.id, type: 'file_deleted' });
    }
    const gone = await files(prism.url, `/v1/files/${uploaded.json.id}`);
    expectClean(gone, 404);
    expect(gone.json).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'file_not_found' } });
  });

  it('downloads a generated file through Prism: its bytes and type, as an attachment', async () => {
    const data = Buffer.from('a,b\n1,2\n');
    const id = await seedGeneratedFile({ t, account }, data, 'table.csv', 'text/csv');
    const res = await files(prism.url, `/v1/files/${id}/content`);
    expectClean(res, 200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="table.csv"');
    expect(res.text).toBe(data.toString());
    const meta = await files(prism.url, `/v1/files/${id}`);
    expectClean(meta, 200);
    expect(meta.json).toMatchObject({ id, downloadable: true, filename: 'table.csv' });
  });

  it('a missing version header and an unknown key are documented messages errors on every file route', async () => {
    for (const [method, path] of [['GET', '/v1/files'], ['GET', '/v1/files/file_gw_x'], ['DELETE', '/v1/files/file_gw_x'], ['GET', '/v1/files/file_gw_x/content']]) {
      const noVersion = await callHttp(prism.url, path!, { method, key: account.key });
      expectClean(noVersion, 400);
      expect(noVersion.json.error.message).toContain('anthropic-version');
      const unauthorized = await files(prism.url, path!, { method, key: 'gw-not-a-real-key' });
      expectClean(unauthorized, 401);
      for (const res of [noVersion, unauthorized]) expectValid('MessagesErrorResponse', res.json);
    }
    const noVersionUpload = await callHttp(prism.url, '/v1/files', { key: account.key, body: form(NOTES, 'notes.txt', 'text/plain') });
    expectClean(noVersionUpload, 400);
  });

  // Negative controls: the same checks fail when the request or an answer breaks the contract.
  it('reports a multipart request violation (no `file` part) without forwarding it', async () => {
    const f = new FormData();
    f.append('expires_in_seconds', '3600');
    const res = await files(prism.url, '/v1/files', { body: f });
    expect(res.status).toBe(422);
    expect(res.headers.get('x-request-id')).toBeNull();
    expect(res.json.validation).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'required', message: expect.stringContaining('file') })]));
  });

  it('reports a response violation of every file answer against a document it does not satisfy', async () => {
    const authorized = await authorize(t.url);
    const a = authorized.json as Authorization;
    await fetch(a.upload_url, { method: a.method, headers: a.headers, body: new Uint8Array(SAMPLE_PNG) });
    const uploaded = await upload(t.url);
    const id = uploaded.json.id as string;
    const answers: Array<[string, Answer]> = [
      ['UploadAuthorization', await authorize(strictPrism.url)],
      ['FinalizedFile', await finalize(strictPrism.url, a.file_id)],
      ['FileMetadata', await upload(strictPrism.url)],
      ['FileMetadata (get)', await files(strictPrism.url, `/v1/files/${id}`)],
      ['FileList', await files(strictPrism.url, '/v1/files')],
      ['FileDeleted', await files(strictPrism.url, `/v1/files/${id}`, { method: 'DELETE' })],
    ];
    for (const [label, res] of answers) {
      expect(res.status, label).toBe(500);
      expect(res.json.type, label).toMatch(/errors#VIOLATIONS$/);
      expect(res.headers.get('sl-violations'), label).toContain('no_such_field');
    }
  });
});
