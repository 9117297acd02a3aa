/**
 * Contract (issue 10): the gateway's Files API and skills requests against the vendor's published spec. One
 * Prism mock (`prism mock SPEC -d false -v debug`) plays Anthropic from `shared/specs/anthropic/openapi.prism.json`;
 * the gateway runs in-process with a real-looking key, so every upstream request goes to the mock. Each case
 * drives a client-facing route and reads the one request Prism logged: method, path, headers (Prism only
 * checks that `anthropic-version` / `anthropic-beta` are strings: they are optional in the spec, so the
 * values are asserted here), and Prism's verdict on the body.
 *
 * What Prism can and cannot judge here:
 * - Multipart: Prism parses `multipart/form-data` and validates its parts (the negative control shows a body
 *   without the required `file` part is refused); it does not check `format: binary`.
 * - Beta message shapes: the vendor's spec declares the beta body (`BetaCreateMessageParams`: a `container`
 *   object, `source: {type: "file"}`) only at `POST /v1/messages?beta=true`; the derived Prism document
 *   kept plain `/v1/messages` with the non-beta `CreateMessageParams`, and Prism cannot pick a body schema
 *   by the `anthropic-beta` header. So Prism refuses (422) the two beta requests the gateway sends to
 *   `/v1/messages`; the tests pin exactly which properties it refuses and validate the very body Prism
 *   logged against `BetaCreateMessageParams` from the same document (Ajv, Prism's options).
 * - `GET /v1/files/{id}` and `/content` are sent only when a skills answer names output files; the mock's
 *   static Message example has none (and the execution is refused before that), so no route reaches them:
 *   they are exercised by calling the publishing step directly.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishGenerated } from '../../src/files/generated.js';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  componentValidator, logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismLoggedRequest, type PrismProcess,
} from '../helpers/prism.js';

const SPEC = resolve(projectRoot(), '../shared/specs/anthropic/openapi.prism.json');
const KEY = 'sk-ant-test-not-real';
const FILES_BETA = 'files-api-2025-04-14';
const SKILLS_BETA = 'skills-2025-10-02';
const spec = JSON.parse(readFileSync(SPEC, 'utf8')) as { components: { schemas: Record<string, any> } };
/** The mock's answers are static: every upload "stores" the id of the BetaFileMetadataSchema example. */
const VENDOR_FILE_ID = spec.components.schemas.BetaFileMetadataSchema.properties.id.examples[0] as string;
const TOOLS = [
  { type: 'code_execution_20260120', name: 'code_execution' },
  { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 3, max_content_tokens: 4096, allowed_domains: ['example.com'] },
];

interface Answer { status: number; text: string; json: any }

describe.runIf(storeKind === 'pglite')('Prism as Anthropic: Files API and skills requests against the vendor spec', () => {
  let prism: PrismProcess;
  let t: TestGateway;
  let account: { id: string; key: string };
  /** The one upload's gateway id. One only: the mock answers every upload with the same vendor id, and the
   *  gateway maps each vendor file to one gateway file (a second upload fails on the store's unique index, 500). */
  let uploaded = '';
  const betaMessage = componentValidator(spec.components, 'BetaCreateMessageParams');

  beforeAll(async () => {
    prism = await startPrismMock(SPEC);
    t = await startTestGateway({ env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: prism.url } });
    const anthropic = t.gw.generation().gateway.providers.get('anthropic')!;
    expect([anthropic.simulated, anthropic.baseUrl.replace(/\/$/, '')]).toEqual([false, prism.url]);
    account = await t.account('5');
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await stopChild(prism?.child);
  }, 60_000);

  /** One client request to the gateway; returns its answer and every request the mock logged meanwhile. */
  async function send(method: string, route: string, body?: FormData | object, headers: Record<string, string> = {}, expected = 1): Promise<{ answer: Answer; logged: PrismLoggedRequest[]; detail: string }> {
    const mark = logMark(prism);
    const all: Record<string, string> = { 'x-api-key': account.key, 'anthropic-version': '2023-06-01', ...headers };
    if (body !== undefined && !(body instanceof FormData)) all['content-type'] = 'application/json';
    const res = await fetch(`${t.url}${route}`, { method, headers: all, body: body instanceof FormData || body === undefined ? body : JSON.stringify(body) });
    const text = await res.text();
    let json: unknown = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    const logged = await loggedRequestsSince(prism, mark, expected);
    const detail = `client ${res.status}: ${text.slice(0, 1500)}\nprism:\n${logged.flatMap((r) => r.lines).join('\n').slice(0, 8000)}`;
    return { answer: { status: res.status, text, json }, logged, detail };
  }

  /** The request reached METHOD PATH with the gateway's key, the API version, and every beta flag named. */
  function expectVendorRequest(r: PrismLoggedRequest | undefined, method: string, path: string, betas: string[], detail: string): void {
    expect(`${r?.method} ${r?.path}`, detail).toBe(`${method} ${path}`);
    expect(r!.headers['x-api-key'], detail).toBe(KEY);
    expect(r!.headers['anthropic-version'], detail).toBe('2023-06-01');
    const sent = (r!.headers['anthropic-beta'] ?? '').split(',').map((s) => s.trim());
    for (const beta of betas) expect(sent, detail).toContain(beta);
  }

  /** Prism validated the request with no violation at all and answered 2xx. */
  function expectPassed(r: PrismLoggedRequest, detail: string): void {
    expect(r.violations, detail).toEqual([]);
    expect([r.passed, r.terminated], detail).toEqual([true, null]);
    expect(r.status! >= 200 && r.status! < 300, detail).toBe(true);
  }

  /** Prism's distinct request-violation texts (each is logged twice: as a warning/error, and as `Violation: request...`). */
  const refusals = (r: PrismLoggedRequest): string[] => [...new Set(r.violations.map((v) => v.replace(/^Violation: \S+ /, '')))].filter((v) => v !== 'Request did not pass the validation rules');

  function uploadForm(): FormData {
    const form = new FormData();
    form.append('file', new Blob(['The quarterly report says revenue grew.'], { type: 'text/plain' }), 'report.txt');
    return form;
  }

  it('negative control: the mock validates multipart bodies (no `file` part is refused)', async () => {
    const mark = logMark(prism);
    const form = new FormData();
    form.append('other', new Blob(['x'], { type: 'text/plain' }), 'x.txt');
    const res = await fetch(`${prism.url}/v1/files`, { method: 'POST', headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'anthropic-beta': FILES_BETA }, body: form });
    expect(res.status).toBe(422);
    await res.text();
    const [logged, ...rest] = await loggedRequestsSince(prism, mark, 1);
    expect(rest).toEqual([]);
    expect(logged).toMatchObject({ method: 'POST', path: '/v1/files', passed: false });
    expect(refusals(logged!)).toEqual(["Request body must have required property 'file'"]);
  });

  it('POST /v1/files: a multipart body with the `file` part, the files beta flag; validates', async () => {
    const { answer, logged, detail } = await send('POST', '/v1/files', uploadForm());
    expect(logged, detail).toHaveLength(1);
    const [r] = logged;
    expectVendorRequest(r, 'POST', '/v1/files', [FILES_BETA], detail);
    expectPassed(r!, detail);
    expect(r!.headers['content-type'], detail).toMatch(/^multipart\/form-data; boundary=/);
    // At debug level Prism logs the raw multipart text (over several log lines, CRLFs kept: PrismLoggedRequest.body
    // stays unset): one part, `file`, with the client's file name, type and bytes.
    const raw = r!.lines.slice(r!.lines.findIndex((l) => /< Body: /.test(l))).join('\n');
    expect(raw, detail).toMatch(/Content-Disposition: form-data; name="file"; filename="report.txt"\s+Content-Type: text\/plain\s+The quarterly report says revenue grew\./);
    expect(raw.match(/Content-Disposition/g), detail).toHaveLength(1);
    // The client gets a gateway id, never the vendor's; size and type come from the vendor's answer (the mock's placeholders).
    expect(answer.status, detail).toBe(200);
    expect(answer.json).toMatchObject({ id: expect.stringMatching(/^file_gw_/), type: 'file', filename: 'report.txt', downloadable: false });
    expect(answer.text).not.toContain(VENDOR_FILE_ID);
    uploaded = answer.json.id as string;
  });

  it('POST /v1/messages with a document `source: {type: file}`: the vendor id and the files beta flag (a beta body Prism refuses)', async () => {
    expect(uploaded, 'needs the upload above').not.toBe('');
    const { answer, logged, detail } = await send('POST', '/v1/messages', {
      model: 'claude-haiku-4-5', max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: uploaded } }, { type: 'text', text: 'Summarise the document.' }] }],
    });
    expect(logged, detail).toHaveLength(1);
    const [r] = logged;
    expectVendorRequest(r, 'POST', '/v1/messages', [FILES_BETA], detail);
    expect(r!.body, detail).toMatchObject({ model: 'claude-haiku-4-5-20251001', messages: [{ content: [{ type: 'document', source: { type: 'file', file_id: VENDOR_FILE_ID } }, { type: 'text' }] }] });
    expect(JSON.stringify(r!.body)).not.toContain('file_gw_');
    // Prism reads it against the non-beta CreateMessageParams, where a document source is base64, text,
    // content or url only: every violation is about that one block, and the beta schema accepts the body.
    expect([r!.passed, r!.status], detail).toEqual([false, 422]);
    expect(refusals(r!).every((v) => v.startsWith('Request body property messages.0.content')), detail).toBe(true);
    expect(refusals(r!), detail).toContain("Request body property messages.0.content.0.source must NOT have additional properties; found 'file_id'");
    expect(betaMessage(r!.body), betaMessage.errorsText()).toBe(true);
    expect([answer.status, answer.json?.error?.code], detail).toEqual([400, 'invalid_request']);
  });

  it('skills execution: container skills, both tools and the skills beta flag (a beta body Prism refuses); no files calls follow', async () => {
    const body = {
      model: 'claude-sonnet-4-5', max_tokens: 1024, stream: false, tools: TOOLS,
      container: { skills: [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] },
      messages: [{ role: 'user', content: 'Make the spreadsheet.' }],
    };
    const { answer, logged, detail } = await send('POST', '/v1/messages', body, { 'x-gateway-operation-id': `op-prism-${Date.now()}` });
    // One vendor request: the refused execution has no outputs to publish, so no GET /v1/files/... follows.
    expect(logged.map((r) => `${r.method} ${r.path}`), detail).toEqual(['POST /v1/messages']);
    const [r] = logged;
    expectVendorRequest(r, 'POST', '/v1/messages', [SKILLS_BETA], detail);
    expect(r!.headers['x-gateway-operation-id'], 'the operation id stays at the gateway').toBeUndefined();
    expect(r!.body, detail).toEqual({ ...body, model: 'claude-sonnet-4-5-20250929' });
    // Prism's only objection: the non-beta schema's `container` is a string or null. The tools validate
    // against the non-beta tool union as well (CodeExecutionTool_20260120, WebFetchTool_20260209).
    expect([r!.passed, r!.status], detail).toEqual([false, 422]);
    expect(refusals(r!), detail).toEqual([
      'Request body property container must be string',
      'Request body property container must be null',
      'Request body property container must match a schema in anyOf',
    ]);
    expect(betaMessage(r!.body), betaMessage.errorsText()).toBe(true);
    expect([answer.status, answer.json?.error?.code], detail).toEqual([400, 'invalid_request']);
  });

  // No client route reaches these against the static mock (see the header): the publishing step a skills
  // answer with an output file would run, called directly with the gateway's own dependencies.
  it('GET /v1/files/{file_id} and /content (publishing an output): both with the files beta flag; both validate', async () => {
    const mark = logMark(prism);
    const provider = t.gw.generation().gateway.providers.get('anthropic')!;
    const publishing = publishGenerated(t.gw.runtime.files!.publish!, account.id, provider, VENDOR_FILE_ID, 'container_gw_prism', AbortSignal.timeout(10_000));
    // Both requests validate; the publishing then refuses the mock's placeholder bytes, which are not the
    // document its metadata declares (a real output must verify as its own type).
    await expect(publishing).rejects.toThrow(/did not verify/);
    const logged = await loggedRequestsSince(prism, mark, 2);
    const detail = logged.flatMap((r) => r.lines).join('\n').slice(0, 6000);
    expect(logged, detail).toHaveLength(2);
    const [metadata, content] = logged;
    expectVendorRequest(metadata, 'GET', `/v1/files/${VENDOR_FILE_ID}`, [FILES_BETA], detail);
    expectPassed(metadata!, detail);
    expectVendorRequest(content, 'GET', `/v1/files/${VENDOR_FILE_ID}/content`, [FILES_BETA], detail);
    // A download accepts any type: the operation's only declared answer is application/octet-stream.
    expect(content!.headers.accept, detail).toBe('*/*');
    expectPassed(content!, detail);
  });

  it('DELETE /v1/files/{file_id}: the vendor id of the upload, the files beta flag; validates', async () => {
    const fileId = uploaded;
    expect(fileId, 'needs the upload above').not.toBe('');
    const { answer, logged, detail } = await send('DELETE', `/v1/files/${fileId}`);
    expect(logged, detail).toHaveLength(1);
    expectVendorRequest(logged[0], 'DELETE', `/v1/files/${VENDOR_FILE_ID}`, [FILES_BETA], detail);
    expectPassed(logged[0]!, detail);
    expect([answer.status, answer.json], detail).toEqual([200, { id: fileId, type: 'file_deleted' }]);
    // Deleted is deleted: a second delete is answered by the gateway alone.
    const again = await send('DELETE', `/v1/files/${fileId}`, undefined, {}, 0);
    expect([again.answer.status, again.logged]).toEqual([200, []]);
  });
});
