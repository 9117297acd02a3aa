/**
 * POST /v1/documents/translate end to end (issue 12 item 1; spec 4.9, 1, 7, 8): a real DOCX built with
 * the `docx` library, uploaded as multipart `document` with `to`, `from` and `model` in the query,
 * through the gateway to the simulator playing Azure Document Translation's synchronous
 * `document:translate`. The answer is the translated DOCX as a download (Content-Disposition named
 * after the client's file and the target language), billed per character the upstream charged
 * (x-metered-usage) to the nano-dollar, with X-Gateway-Characters and X-Gateway-Cost-USD. Anything but
 * a DOCX (a PDF renamed .docx, an image, a text file) and a 2 MiB + 1 byte upload are refused before
 * anything is reserved; an upstream failure, a cut answer or one without its billed count charges nothing.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { measureDocx } from '../../src/files/verify/documents.js';
import { inspectZip } from '../../src/files/verify/zip.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { docxOf, pdfOf } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { expectBrokenAnswer, expectUntouched } from '../helpers/native.js';
import { sevenBitDocx } from '../helpers/seven-bit-documents.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const BALANCE = 1_000_000_000n;
/** $15.00 per 1,000,000 characters: one character is 15,000 nano-USD. */
const CHARACTER_NANO = 15_000n;
const PARAGRAPHS = ['Quarterly report', 'Revenue grew by 12% — Ünïcödé 😀.'];
/** The gateway's own count (the hold): every code point of the text runs, 16 + 32. */
const LOCAL_CHARACTERS = 48;
/** The simulator's x-metered-usage (src/sim/azure-document-translation.ts): the code points that are not white space, 15 + 26. */
const BILLED_CHARACTERS = 41;

interface Answer { status: number; headers: Headers; data: Buffer; json: any }

/** POSTs one file part `document` (and optional form fields) to the route, with `query` appended to the path. */
async function upload(t: TestGateway, key: string, query: string, file: { data: Buffer; name: string; type: string } | null, fields: Record<string, string> = {}): Promise<Answer> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('document', new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
  const res = await fetch(`${t.url}/v1/documents/translate${query}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const data = Buffer.from(await res.arrayBuffer());
  const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(data.toString('utf8')) : null;
  return { status: res.status, headers: res.headers, data, json };
}

/** The text runs of a DOCX's main part, in order. */
async function textRuns(docx: Buffer): Promise<string[]> {
  const zip = await inspectZip(docx, {}, { keep: ['word/document.xml'] });
  if (!zip.ok) throw new Error(zip.reason);
  return [...zip.entries.get('word/document.xml')!.toString('utf8').matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]!);
}

describeStore(`documents translate (${storeKind})`, () => {
  let t: TestGateway;
  let report: Buffer;
  beforeAll(async () => {
    t = await startTestGateway();
    report = await docxOf(PARAGRAPHS);
  });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  it('answers the translated DOCX as a download, billed exactly for the characters the upstream charged', async () => {
    expect(await measureDocx(report)).toEqual({ ok: true, characters: LOCAL_CHARACTERS });
    const account = await t.account('1');
    const a = await upload(t, account.key, '?to=fr&from=en&model=document-translation', { data: report, name: 'report.docx', type: DOCX });
    expect(a.status, a.data.toString('utf8').slice(0, 300)).toBe(200);
    expect(a.headers.get('content-type')).toBe(DOCX);
    expect(a.headers.get('content-disposition')).toBe(`attachment; filename="report.fr.docx"; filename*=UTF-8''report.fr.docx`);
    expect(Number(a.headers.get('content-length'))).toBe(a.data.length);
    // A real DOCX, its text runs translated by the simulator into French (prefix [fr]).
    expect((await measureDocx(a.data)).ok).toBe(true);
    expect(await textRuns(a.data)).toEqual(PARAGRAPHS.map((p) => `[fr] ${p}`));
    // 41 characters at $15 per 1M: 615,000 nano-USD, the upstream's count, not the local 48 held.
    const amount = CHARACTER_NANO * BigInt(BILLED_CHARACTERS);
    expect(amount).toBe(615_000n);
    expect(a.headers.get('x-gateway-characters')).toBe(String(BILLED_CHARACTERS));
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.000615');
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model })))
      .toEqual([{ kind: 'documents-translate', unit: 'character', quantity: BigInt(BILLED_CHARACTERS), amount, model: 'document-translation' }]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: BALANCE - amount, heldNano: 0n, openHolds: 0 });
    const last = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { path: string; headers: Record<string, string> };
    expect(last.path).toBe('/translator/document:translate');
    expect(last.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('uses the default offering without `model`, takes `to` as a form field too, and names the download safely', async () => {
    const account = await t.account('1');
    const plain = await upload(t, account.key, '?to=de', { data: report, name: 'C:\\Users\\ana\\Q3: final*.DOCX', type: 'application/octet-stream' });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-disposition')).toBe(`attachment; filename="Q3_ final_.de.docx"; filename*=UTF-8''Q3_%20final_.de.docx`);
    expect(await textRuns(plain.data)).toEqual(PARAGRAPHS.map((p) => `[de] ${p}`));
    const field = await upload(t, account.key, '', { data: report, name: 'Ünïcödé.docx', type: DOCX }, { to: 'zh-Hans' });
    expect(field.status).toBe(200);
    expect(field.headers.get('content-disposition')).toBe(`attachment; filename="_n_c_d_.zh-Hans.docx"; filename*=UTF-8''%C3%9Cn%C3%AFc%C3%B6d%C3%A9.zh-Hans.docx`);
    expect(await textRuns(field.data)).toEqual(PARAGRAPHS.map((p) => `[zh-Hans] ${p}`));
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => [r.model, r.quantity, r.amountNano])).toEqual([
      ['document-translation', 41n, 615_000n], ['document-translation', 41n, 615_000n],
    ]);
  });

  it('translates the route sample\'s 7-bit DOCX (every byte below 0x80, so it crosses the Prism proxy) like any other', async () => {
    const account = await t.account('1');
    const docx = sevenBitDocx('Quarterly report.');
    expect(docx.every((b) => b < 0x80)).toBe(true);
    expect(await measureDocx(docx)).toEqual({ ok: true, characters: 17 });
    const a = await upload(t, account.key, '?to=fr', { data: docx, name: 'report.docx', type: DOCX });
    expect(a.status).toBe(200);
    expect(await textRuns(a.data)).toEqual(['[fr] Quarterly report.']);
    // 16 characters that are not white space, at 15,000 nano each.
    expect([a.headers.get('x-gateway-characters'), a.headers.get('x-gateway-cost-usd')]).toEqual(['16', '0.00024']);
  });

  it('refuses a bad query, a PDF renamed .docx, an image, a text file and a 2 MiB + 1 byte upload before anything is reserved', async () => {
    const account = await t.account('1');
    const docx = { data: report, name: 'report.docx', type: DOCX };
    const expectError = (a: Answer, status: number, code: string, param: string | null, message?: string) => {
      expect(a.status, JSON.stringify(a.json)).toBe(status);
      expect(a.json.error).toMatchObject({ code, param, ...(message ? { message } : {}) });
    };
    expectError(await upload(t, account.key, '', docx), 400, 'invalid_request', 'to');
    expectError(await upload(t, account.key, '?to=fr', docx, { to: 'de' }), 400, 'invalid_request', 'to', "'to' is given both in the query and in the body; send it once.");
    expectError(await upload(t, account.key, '?to=fr&to=de', docx), 400, 'invalid_request', 'to');
    expectError(await upload(t, account.key, '?to=not a language', docx), 400, 'invalid_request', 'to');
    expectError(await upload(t, account.key, '?to=fr&from=12', docx), 400, 'invalid_request', 'from');
    expectError(await upload(t, account.key, '?to=fr', null), 400, 'invalid_request', 'document');
    expectError(await upload(t, account.key, '?to=fr&model=translator-standard', docx), 400, 'model_not_available', 'model');
    const pdf = await upload(t, account.key, '?to=fr', { data: await pdfOf(1, 'A PDF.'), name: 'report.docx', type: DOCX });
    expectError(pdf, 400, 'invalid_request', 'document', "The file in 'document' is not a usable DOCX: The bytes are a PDF document. Supported: DOCX.");
    const image = await upload(t, account.key, '?to=fr', { data: png(64, 64), name: 'scan.docx', type: DOCX });
    expectError(image, 400, 'invalid_request', 'document', "The file in 'document' is not a usable DOCX: The bytes are a PNG image. Supported: DOCX.");
    const text = await upload(t, account.key, '?to=fr', { data: Buffer.from('Just some text.'), name: 'notes.docx', type: DOCX });
    expectError(text, 400, 'invalid_request', 'document');
    expect(text.json.error.message).toMatch(/^The file in 'document' is not a usable DOCX: .+ Supported: DOCX\.$/);
    const cut = await upload(t, account.key, '?to=fr', { data: report.subarray(0, Math.floor(report.length * 0.6)), name: 'report.docx', type: DOCX });
    expectError(cut, 400, 'invalid_request', 'document');
    // Spec 8: "Document translation input: 2 MiB (DOCX)"; one byte more is refused while it streams in.
    const big = await upload(t, account.key, '?to=fr', { data: Buffer.concat([report, Buffer.alloc(2 * 1024 * 1024 + 1 - report.length)]), name: 'big.docx', type: DOCX });
    expectError(big, 400, 'invalid_request', 'document', "The file in 'document' is larger than 2097152 bytes.");
    await expectUntouched(t, account, BALANCE);
  });

  it('charges nothing when the upstream fails, cuts its answer, or answers without the characters it charged', async () => {
    const account = await t.account('1');
    const send = () => upload(t, account.key, '?to=fr', { data: report, name: 'report.docx', type: DOCX });
    // Both attempts of the request: the first and its one retry on the same deployment (issue 29).
    await t.fault({ status: 500, times: 2 }, 'azure-document-translation');
    const failed = await send();
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe('upstream_error');
    await t.fault({ status: 400, times: 1 }, 'azure-document-translation');
    const refused = await send();
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'invalid_request', message: 'Simulated error (status 400).' });
    await t.fault({ omit_usage: true, times: 1 }, 'azure-document-translation');
    const uncounted = await send();
    expect(uncounted.status).toBe(502);
    expect(uncounted.json.error.message).toContain('x-metered-usage');
    await t.fault({ error_after_chunks: 1, times: 1 }, 'azure-document-translation');
    const notDocx = await send();
    expect(notDocx.status).toBe(502);
    expect(notDocx.json.error.message).toBe('The upstream provider sent a file that is not a DOCX.');
    await t.fault({ truncate_after_chunks: 2, times: 1 }, 'azure-document-translation');
    const truncated = await fetch(`${t.url}/v1/documents/translate?to=fr`, { method: 'POST', headers: { authorization: `Bearer ${account.key}` }, body: (() => { const f = new FormData(); f.append('document', new Blob([new Uint8Array(report)], { type: DOCX }), 'report.docx'); return f; })() });
    // Streamed through (x-metered-usage fixes the price at the headers): a 200 whose body breaks off.
    await expectBrokenAnswer(truncated);
    await expectUntouched(t, account, BALANCE);
  });

  it('holds the locally counted characters: an account that cannot cover them gets a 402 with nothing reserved', async () => {
    // 48 characters held at 15,000 nano each: 720,000 nano; the account has 700,000.
    const poor = await t.account('0.0007');
    const a = await upload(t, poor.key, '?to=fr', { data: report, name: 'report.docx', type: DOCX });
    expect(a.status).toBe(402);
    expect(a.json.error.code).toBe('insufficient_balance');
    expect(a.json.error.message).toContain('$0.00072 reserved (48 characters');
    await expectUntouched(t, poor, 700_000n);
  });
});
