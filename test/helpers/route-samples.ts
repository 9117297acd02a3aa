/**
 * One sample request per route, for the tests that loop over the route table (test/e2e/hardening*.test.ts,
 * test/contract/prism-gateway-routes.test.ts), chosen by the route's kind as fuzzRoutes derives it from the
 * route table and the OpenAPI document: a JSON body (SAMPLE), a multipart form (FORM_SAMPLE), or path
 * parameters made real (PARAM_SAMPLE: a file uploaded, a temporary file authorized and uploaded, a
 * generated file seeded). A GET or body-less route without path parameters needs no entry; any other
 * route needs exactly one, and sampleRequest says so when it is missing. Plus the checks those tests share.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'vitest';
import { reserveMessageFile } from '../../src/files/message-records.js';
import { randomId } from '../../src/ledger/ids.js';
import { fileProvider } from '../../src/pipeline/local/message-files.js';
import { errorFields, errorShapeProblems, type ErrorFields, type FuzzRoute, type RawResponse } from './fuzz.js';
import { encodeMultipart, type FormPart } from './fuzz-requests.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './gateway.js';
import { copyConfig } from './config.js';
import { sevenBitWav } from './wav.js';
import { sevenBitWebpContainer } from './images.js';
import { sevenBitDocx, sevenBitPdf } from './seven-bit-documents.js';
import { jpeg } from './jpeg.js';

/** The sample PNG (test/fixtures/files/sample.png). */
export const SAMPLE_PNG = readFileSync(join(import.meta.dirname, '../fixtures/files/sample.png'));
/** A 0.1 s WAV of 7-bit bytes only, so it also crosses the Prism proxy of the gateway contract intact. */
export const SAMPLE_WAV = sevenBitWav();

/** A small JSON request each JSON route answers with 200. */
export const SAMPLE: Record<string, Record<string, unknown>> = {
  'chat-completions': { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
  responses: { model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 16 },
  messages: { model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  'count-tokens': { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] },
  rerank: { model: 'rerank-pro', query: 'hi', documents: ['hello', 'world'] },
  // Issue 31 item 11: Cohere's own v2 shapes, billed as /v1/rerank and /v1/embeddings.
  'cohere-rerank': { model: 'rerank-pro', query: 'hi', documents: ['hello', 'world'] },
  'cohere-embed': { model: 'embed-pro', texts: ['hi'], input_type: 'search_document' },
  translate: { model: 'translator-standard', text: 'hi', to: 'de' },
  embeddings: { model: 'text-embedding-3-small', input: 'hi' },
  moderations: { model: 'content-safety-text', text: 'hi' },
  'language-analyze': { model: 'language-standard', text: 'hi' },
  'language-summarize': { model: 'language-standard', text: 'Hi there.' },
  // Spec 4.8: MP3 answers (audio/mpeg), billed per character / per generated second.
  speech: { model: 'eleven_flash_v2_5', voice: 'george', input: 'Hi there.' },
  'sound-effects': { model: 'eleven_text_to_sound_v2', prompt: 'A door creaks.', duration_seconds: 0.5 },
  // Spec 4.14: one image per request, billed by reported tokens (gpt-image-1) or per image (dall-e-3).
  'images-generations': { model: 'gpt-image-1', prompt: 'A red square.', quality: 'low' },
  // Spec 4.16: an asynchronous job (4 s of sora-2 held; the answer is the queued job).
  'videos-generations': { model: 'sora-2', prompt: 'A red kite.' },
  'gateway-files-authorize': { purpose: 'VISION_INPUT', content_type: 'image/png', byte_size: SAMPLE_PNG.length },
  // Spec 4.12: a one-page PDF (test/fixtures/files/sample.pdf), read or analyzed after polling; billed one page.
  ocr: { model: 'document-read', image: readFileSync(join(import.meta.dirname, '../fixtures/files/sample.pdf')).toString('base64') },
  'documents-analyze': { model: 'document-layout', document: `data:application/pdf;base64,${readFileSync(join(import.meta.dirname, '../fixtures/files/sample.pdf')).toString('base64')}` },
  // Spec 4.12: one image, billed per selected feature (two here).
  'vision-analyze': { model: 'image-analysis', image: jpeg(64, 64).toString('base64'), features: 'caption,tags' },
};

/** A small form each multipart route answers with 200. */
export const FORM_SAMPLE: Record<string, FormPart[]> = {
  'files-upload': [{ name: 'file', filename: 'hello.txt', type: 'text/plain', data: 'hello files' }],
  // Spec 4.8: a 0.1 s WAV, billed as one started second at whisper-1's price.
  'audio-transcriptions': [{ name: 'model', data: 'whisper-1' }, { name: 'file', filename: 'sample.wav', type: 'audio/wav', data: SAMPLE_WAV }],
  'audio-translations': [{ name: 'model', data: 'whisper-1' }, { name: 'file', filename: 'sample.wav', type: 'audio/wav', data: SAMPLE_WAV }],
  // Spec 4.14: one input image, billed by gpt-image-1's reported tokens; a 7-bit WebP container, so it
  // also crosses the Prism proxy of the gateway contract intact (no PNG or JPEG can).
  'images-edits': [{ name: 'model', data: 'gpt-image-1' }, { name: 'prompt', data: 'Make it blue.' }, { name: 'quality', data: 'low' }, { name: 'image', filename: 'sample.webp', type: 'image/webp', data: sevenBitWebpContainer() }],
  // Spec 4.9: a DOCX into French (`to` as a form field: query_fields reads it from the query or the
  // form), billed per character the upstream charged; 7-bit bytes, so it crosses the Prism proxy intact.
  'documents-translate': [{ name: 'to', data: 'fr' }, { name: 'document', filename: 'report.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: sevenBitDocx('Quarterly report.') }],
  // Spec 4.9: a two-page 7-bit PDF. The offering ships unavailable, so as shipped this sample gets
  // 400 model_not_available with nothing reserved (test/e2e/redact-pii.test.ts).
  'documents-redact-pii': [{ name: 'language', data: 'en' }, { name: 'document', filename: 'scan.pdf', type: 'application/pdf', data: sevenBitPdf(2, 'Jane Doe') }],
};

/** Who a sample is for. */
export interface SampleContext { t: TestGateway; account: { id: string; key: string } }

/** Path parameters each route with path parameters answers with 200 (resources created for the account). */
export const PARAM_SAMPLE: Record<string, (c: SampleContext) => Promise<Record<string, string>>> = {
  'models-get': async () => ({ model: 'gpt-4o' }),
  'files-get': async (c) => ({ file_id: await uploadMessageFile(c) }),
  'files-delete': async (c) => ({ file_id: await uploadMessageFile(c) }),
  'files-content': async (c) => ({ file_id: await seedGeneratedFile(c) }),
  'gateway-files-finalize': async (c) => ({ file_id: (await uploadTempFile(c)).file_id }),
  'videos-get': async (c) => ({ id: await startVideoJob(c) }),
  'responses-get': async (c) => ({ response_id: await storeResponse(c) }),
  'responses-delete': async (c) => ({ response_id: await storeResponse(c) }),
  'responses-input-items': async (c) => ({ response_id: await storeResponse(c) }),
};

/** A stored response of the account (issue 31 item 3): the responses sample, kept as `store` defaults. */
export async function storeResponse(c: SampleContext): Promise<string> {
  await c.t.clearFaults();
  const res = await send(c.t, {
    method: 'POST', path: '/v1/responses', body: JSON.stringify(SAMPLE.responses),
    headers: { authorization: `Bearer ${c.account.key}`, 'content-type': 'application/json' },
  });
  if (res.status !== 200) throw new Error(`stored response for a sample: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { id: string }).id;
}

/**
 * A finished video job of the account (the videos-generations sample), its video_gw_ id: started, then
 * polled to completion once due (2 s after it started), so its hold is settled and nothing stays held.
 */
export async function startVideoJob(c: SampleContext): Promise<string> {
  // The job holds its seconds until it ends (4 s of sora-2: $0.40), more than the samples' accounts carry;
  // faults a test left for other requests do not apply to making the sample.
  await c.t.gw.runtime.ledger.topUp(c.account.id, 1_000_000_000n);
  await c.t.clearFaults();
  const res = await send(c.t, {
    method: 'POST', path: '/v1/videos/generations', body: JSON.stringify(SAMPLE['videos-generations']),
    headers: { authorization: `Bearer ${c.account.key}`, 'content-type': 'application/json' },
  });
  if (res.status !== 200) throw new Error(`video job for a sample: ${res.status} ${res.text}`);
  const id = (JSON.parse(res.text) as { id: string }).id;
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 250));
    await fetch(`${c.t.url}/admin/jobs/video-jobs/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.arrayBuffer());
    const job = await send(c.t, { method: 'GET', path: `/v1/videos/generations/${id}`, headers: { authorization: `Bearer ${c.account.key}` } });
    if ((JSON.parse(job.text) as { status: string }).status === 'completed') return id;
  }
  throw new Error(`the sample video job ${id} did not complete`);
}

/** The boundary of every sample form. */
export const FORM_BOUNDARY = 'gwsampleboundary';

/** The route's required headers, each with its first accepted value. */
export function versionHeaders(t: TestGateway, r: FuzzRoute): Record<string, string> {
  const compiled = t.gw.generation().gateway.routes.find((c) => c.manifest.id === r.id)!;
  return Object.fromEntries(compiled.requiredHeaders.map((h) => [h.name, [...h.values][0]!]));
}

/** One request as sent. */
export interface SampleRequest { method: string; path: string; headers: Record<string, string>; body?: string | Buffer }

/** `path` with its `{name}` parameters filled in (percent-encoded). */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (params[name] === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(params[name]);
  });
}

/** The route's sample request with the account's key: 200 expected. */
export async function sampleRequest(c: SampleContext, r: FuzzRoute): Promise<SampleRequest> {
  const missing = (table: string) => new Error(`route ${r.id} (${r.body} body, path parameters: ${r.pathParams.join(', ') || 'none'}) needs an entry in ${table} of test/helpers/route-samples.ts`);
  const headers: Record<string, string> = { authorization: `Bearer ${c.account.key}`, ...versionHeaders(c.t, r) };
  let params: Record<string, string> = {};
  if (r.pathParams.length > 0) {
    const make = PARAM_SAMPLE[r.id];
    if (!make) throw missing('PARAM_SAMPLE');
    params = await make(c);
  }
  const path = fillPath(r.path, params);
  if (r.body === 'json') {
    const body = SAMPLE[r.id];
    if (!body) throw missing('SAMPLE');
    return { method: r.method, path, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
  }
  if (r.body === 'multipart') {
    const form = FORM_SAMPLE[r.id];
    if (!form) throw missing('FORM_SAMPLE');
    return { method: r.method, path, headers: { ...headers, 'content-type': `multipart/form-data; boundary=${FORM_BOUNDARY}` }, body: encodeMultipart(form, FORM_BOUNDARY) };
  }
  return { method: r.method, path, headers };
}

/** Sends a request with fetch; the answer's status, headers and text. */
export async function send(t: TestGateway, req: SampleRequest): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${t.url}${req.path}`, { method: req.method, headers: req.headers, body: req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : new Uint8Array(req.body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Uploads the files-upload sample form for the account through POST /v1/files; its file_gw_ id. */
export async function uploadMessageFile(c: SampleContext): Promise<string> {
  const res = await send(c.t, {
    method: 'POST', path: '/v1/files', body: encodeMultipart(FORM_SAMPLE['files-upload']!, FORM_BOUNDARY),
    headers: { authorization: `Bearer ${c.account.key}`, 'anthropic-version': '2023-06-01', 'content-type': `multipart/form-data; boundary=${FORM_BOUNDARY}` },
  });
  if (res.status !== 200) throw new Error(`upload for a sample: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { id: string }).id;
}

/** An upload authorization as answered. */
export interface Authorization { file_id: string; upload_url: string; method: string; headers: Record<string, string>; upload_expires_at: string }

/** Authorizes the sample PNG as a temporary file and PUTs it to the returned URL with the returned method and headers. */
export async function uploadTempFile(c: SampleContext, bytes: Buffer = SAMPLE_PNG): Promise<Authorization> {
  const authorized = await send(c.t, {
    method: 'POST', path: '/v1/gateway/files/upload-authorizations', body: JSON.stringify({ ...SAMPLE['gateway-files-authorize'], byte_size: bytes.length }),
    headers: { authorization: `Bearer ${c.account.key}`, 'content-type': 'application/json' },
  });
  if (authorized.status !== 200) throw new Error(`authorization for a sample: ${authorized.status} ${authorized.text}`);
  const a = JSON.parse(authorized.text) as Authorization;
  const put = await fetch(a.upload_url, { method: a.method, headers: a.headers, body: new Uint8Array(bytes) });
  if (put.status !== 200) throw new Error(`upload for a sample: ${put.status} ${await put.text()}`);
  await put.arrayBuffer();
  return a;
}

/**
 * A downloadable (generated) messages-format file of the account, as a skill's output would be stored:
 * the bytes in the blob store and an active record. No route creates one yet; downloads need one.
 */
export async function seedGeneratedFile(c: SampleContext, data: Buffer = Buffer.from('generated,output\n1,2\n'), filename = 'report.csv', mimeType = 'text/csv'): Promise<string> {
  const { gw } = c.t;
  const files = gw.runtime.files!;
  const now = new Date();
  const id = randomId('file_gw_');
  const blobKey = `generated/${c.account.id}/${id}`;
  await files.blobs.write(blobKey, Readable.from([data]), { maxBytes: data.length, contentType: mimeType });
  const settings = gw.generation().gateway.settings.files.messages;
  const refused = await reserveMessageFile(gw.db, {
    id, accountId: c.account.id, state: 'active', origin: 'generated', providerId: fileProvider(gw.generation().gateway).id, vendorFileId: null,
    filename, mimeType, sizeBytes: data.length, downloadable: true, blobKey, containerId: null, createdAt: now, expiresAt: new Date(now.getTime() + settings.defaultTtlMs),
  }, settings, now);
  if (refused) throw new Error(`seeding a generated file: quota ${JSON.stringify(refused)}`);
  return id;
}

/** Asserts an error answer in the route's shape, with status and code; returns the error's fields (whatever the shape). */
export function expectError(r: FuzzRoute, res: RawResponse, status: number, code: string, label: string): ErrorFields {
  expect(res.status, `${label}: ${res.body.slice(0, 300)}`).toBe(status);
  expect(res.headers['content-type'], label).toMatch(/^application\/json/);
  expect(errorShapeProblems(r.shape, res.body), label).toEqual([]);
  const error = errorFields(res.body);
  expect(error.code, `${label}: ${res.body}`).toBe(code);
  if (r.shape === 'messages') expect((JSON.parse(res.body) as { type?: unknown }).type).toBe('error');
  return error;
}

/** Balance and newest usage row, once no hold is open. */
export async function settledState(t: TestGateway, accountId: string): Promise<{ balanceNano: bigint; lastRow: string | null }> {
  for (let i = 0; i < 100; i++) {
    const account = (await t.settled(accountId))!;
    if (account.openHolds === 0) {
      const usage = await t.usage(accountId, { limit: 1 });
      return { balanceNano: account.balanceNano, lastRow: usage.data[0]?.id ?? null };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('a hold stayed open');
}

/**
 * The gateway the route-looping tests start: the shipped configuration, with each offering that ships
 * `unavailable` made available (spec 4.9: PII redaction waits for certification, yet its route's
 * sample must reach the upstream), so every route's sample answers 200.
 */
export async function startSampleGateway(): Promise<TestGateway> {
  const config = await copyConfig();
  for (const file of await readdir(join(config.dir, 'providers'))) {
    const text = await readFile(join(config.dir, 'providers', file), 'utf8');
    if (!/availability:\s*unavailable/.test(text)) continue;
    await config.editYaml(`providers/${file}`, (doc) => {
      for (const offering of doc.offerings ?? []) if (offering.availability === 'unavailable') offering.availability = 'available';
    });
  }
  return startTestGateway({ configFile: config.configFile });
}
