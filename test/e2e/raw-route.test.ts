/**
 * A raw body route end to end (issue 9 point 3: "a route declares its request body: JSON,
 * multipart/form-data, or raw bytes"), through fastify, the pipeline and a loopback upstream that
 * records what it receives. The route (added to a config copy) takes a PDF as the whole body
 * (`body: {type: raw, part: document, probe: pdf}`) and its parameters from the query, and calls the
 * PII redaction operation (`request: raw`). The bytes arrive upstream unchanged; a wrong type, a body
 * over `max_bytes` (declared or streamed) and a bad query parameter are refused before anything is
 * reserved; an operation whose translation produces another kind than it declares is a 500 naming
 * it, with nothing sent upstream and nothing charged.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { pdfOf } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched } from '../helpers/native.js';

const BALANCE = 1_000_000_000n;
/** The redaction offering's placeholder price, $10.00 per 1,000 pages: one page is $0.01. */
const PAGE_NANO = 10_000_000n;
const MAX_BYTES = 4096;

/** One request the loopback upstream received. */
interface Received { url: string; headers: IncomingMessage['headers']; body: Buffer }

/** An upstream that records each request and answers with its body as a PDF (the redaction "output"). */
async function recordingUpstream(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': body.length }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** The test route: `path`, calling `operation`, with the PDF as its raw body, sent as one of `mime`. */
function rawRoute(id: string, path: string, operation: string, mime = 'application/pdf, application/octet-stream'): string {
  return [
    'version: 1', `id: ${id}`, 'summary: Redact a PDF sent as the whole body (test).', 'method: POST', `path: ${path}`,
    'format: native-json', 'handler: proxy', 'schemas: { request: native-json/documents-redact-pii-request.json }',
    'query_fields: [language, model]', 'service_types: [PII_REDACTION]', 'model: { required: false, default: pii-redaction }',
    `body: { type: raw, part: document, max_bytes: ${MAX_BYTES}, mime: [${mime}], probe: pdf }`,
    'file_answer: application/pdf',
    'meter: { page: { source: { counter: pages, of: ["files:/document"] }, headers: { quantity: X-Gateway-Pages, cost: X-Gateway-Cost-USD } } }',
    `upstreams: [{ operation: ${operation} }]`, '',
  ].join('\n');
}

describeStore(`raw body route (${storeKind})`, () => {
  let t: TestGateway;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  beforeAll(async () => {
    upstream = await recordingUpstream();
    const copy = await copyConfig();
    await copy.write('routes/pii-raw.yaml', rawRoute('pii-raw', '/v1/pii-raw', 'redact-pdf'));
    // A route that takes text/plain too (fastify's own text/plain parser once read it into a string).
    await copy.write('routes/pii-raw-text.yaml', rawRoute('pii-raw-text', '/v1/pii-raw-text', 'redact-pdf', 'application/pdf, text/plain'));
    await copy.write('routes/pii-raw-mismatch.yaml', rawRoute('pii-raw-mismatch', '/v1/pii-raw-mismatch', 'redact-pdf-as-json'));
    await copy.editYaml('providers/pii-redaction.yaml', (d) => {
      d.offerings[0].availability = 'available';
      // The same translation (raw bytes) on an operation that declares a JSON request: a configuration mistake.
      d.operations['redact-pdf-as-json'] = { ...d.operations['redact-pdf'], request: 'json' };
    });
    t = await startTestGateway({ configFile: copy.configFile, env: { PII_REDACTION_ENDPOINT: upstream.url, PII_REDACTION_KEY: 'pii-test-key' } });
  });
  afterAll(async () => {
    await t?.dispose();
    await new Promise((resolve) => upstream?.server.close(resolve));
  });
  beforeEach(() => { upstream.received.length = 0; });

  const post = async (key: string, path: string, body: Buffer | Readable, headers: Record<string, string>) => {
    const res = await request(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body });
    const data = Buffer.from(await res.body.arrayBuffer());
    const json = String(res.headers['content-type'] ?? '').startsWith('application/json') ? JSON.parse(data.toString('utf8')) : null;
    return { status: res.statusCode, headers: res.headers, data, json };
  };

  it('sends the bytes upstream unchanged, with the query parameters, and bills the probed pages', async () => {
    const account = await t.account('1');
    const pdf = await pdfOf(2, 'Jane Doe, 4 Main Street');
    expect(pdf.length).toBeLessThan(MAX_BYTES);
    const a = await post(account.key, '/v1/pii-raw?language=en', pdf, { 'content-type': 'application/pdf' });
    expect(a.status, a.data.toString('utf8').slice(0, 300)).toBe(200);
    expect(upstream.received).toHaveLength(1);
    const [sent] = upstream.received;
    expect(sent!.body.equals(pdf)).toBe(true);
    expect(sent!.headers['content-type']).toBe('application/pdf');
    expect(sent!.headers.authorization).toBe('Bearer pii-test-key');
    expect(sent!.url).toBe('/pii/v1/documents:redact-pdf?language=en');
    expect(a.data.equals(pdf)).toBe(true);
    expect(a.headers['x-gateway-pages']).toBe('2');
    expect((await t.usage(account.id)).data.map((r) => [r.kind, r.quantity, r.amountNano])).toEqual([['pii-raw', 2n, 2n * PAGE_NANO]]);
    // Any accepted type, parameters ignored; the bytes stay the client's.
    const b = await post(account.key, '/v1/pii-raw', pdf, { 'content-type': 'Application/Octet-Stream; x=1' });
    expect(b.status).toBe(200);
    expect(upstream.received[1]!.body.equals(pdf)).toBe(true);
  });

  it('takes text/plain bytes on a route that accepts text/plain, as a stream like any other type', async () => {
    const account = await t.account('1');
    const pdf = await pdfOf(1);
    const a = await post(account.key, '/v1/pii-raw-text', pdf, { 'content-type': 'text/plain; charset=utf-8' });
    expect(a.status, a.data.toString('utf8').slice(0, 300)).toBe(200);
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]!.body.equals(pdf)).toBe(true);
    expect(a.headers['x-gateway-pages']).toBe('1');
  });

  it('refuses another Content-Type (or none) with a 400 naming the accepted ones, nothing sent or reserved', async () => {
    const account = await t.account('1');
    const pdf = await pdfOf(1);
    for (const type of ['image/png', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', null]) {
      const a = await post(account.key, '/v1/pii-raw', pdf, type ? { 'content-type': type } : {});
      expect(a.status, `${type} ${JSON.stringify(a.json)}`).toBe(400);
      expect(a.json.error.code).toBe('invalid_request');
      expect(a.json.error.message).toMatch(/send the bytes of the 'document' as one of: application\/pdf, application\/octet-stream\.$/);
    }
    expect(upstream.received).toEqual([]);
    await expectUntouched(t, account, BALANCE);
  });

  it('refuses a body over max_bytes, declared or streamed, like an oversize multipart part: nothing sent or reserved', async () => {
    const account = await t.account('1');
    const over = Buffer.concat([await pdfOf(1), Buffer.alloc(MAX_BYTES)]);
    const declared = await post(account.key, '/v1/pii-raw', over, { 'content-type': 'application/pdf' });
    const streamed = await post(account.key, '/v1/pii-raw', Readable.from([over.subarray(0, 1000), over.subarray(1000)]), { 'content-type': 'application/pdf' });
    for (const a of [declared, streamed]) {
      expect(a.status, JSON.stringify(a.json)).toBe(413);
      expect(a.json.error).toMatchObject({ code: 'payload_too_large', param: 'document', message: `The file in 'document' is larger than ${MAX_BYTES} bytes.` });
    }
    // An empty body and bytes that are not a PDF (the probe) are the client's 400s too.
    const empty = await post(account.key, '/v1/pii-raw', Buffer.alloc(0), { 'content-type': 'application/pdf' });
    expect(empty.json.error).toMatchObject({ code: 'invalid_request', param: 'document' });
    const notPdf = await post(account.key, '/v1/pii-raw', Buffer.from('hello, not a pdf'), { 'content-type': 'application/pdf' });
    expect(notPdf.json.error).toMatchObject({ code: 'invalid_request', param: 'document' });
    expect(upstream.received).toEqual([]);
    await expectUntouched(t, account, BALANCE);
  });

  it('validates the query parameters with the route schema before anything is reserved', async () => {
    const account = await t.account('1');
    const pdf = await pdfOf(1);
    const cases: Array<[string, number, string, string]> = [
      ['?language=not+a+language!', 400, 'invalid_request', 'language'],
      ['?language=en&language=de', 400, 'invalid_request', 'language'],
      ['?model=no-such-model', 400, 'model_not_found', 'model'],
    ];
    for (const [query, status, code, param] of cases) {
      const a = await post(account.key, `/v1/pii-raw${query}`, pdf, { 'content-type': 'application/pdf' });
      expect(a.status, `${query} ${JSON.stringify(a.json)}`).toBe(status);
      expect(a.json.error).toMatchObject({ code, param });
    }
    expect(upstream.received).toEqual([]);
    await expectUntouched(t, account, BALANCE);
  });

  it('never sends a body of another kind than the operation declares: a 500 naming it, nothing charged', async () => {
    const account = await t.account('1');
    const a = await post(account.key, '/v1/pii-raw-mismatch', await pdfOf(1), { 'content-type': 'application/pdf' });
    expect(a.status).toBe(500);
    expect(a.json.error).toMatchObject({ code: 'internal_error' });
    expect(a.json.error.message).toBe('The gateway\'s operation "redact-pdf-as-json" declares a json request body, but its translation produced raw; nothing was sent upstream.');
    expect(upstream.received).toEqual([]);
    await expectUntouched(t, account, BALANCE);
  });
});
