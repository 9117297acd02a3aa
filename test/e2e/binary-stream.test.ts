/**
 * Binary answers streamed through (issue 9 point 3; src/pipeline/forward/binary-stream.ts), real HTTP
 * through the gateway to the simulator. A binary answer whose price the meter knows from the request
 * or the upstream's headers is piped to the client as it comes, with its cost headers, and completes
 * only once billed; others are buffered and sent after the settle. The simulator's fault
 * `hold_last_chunk` keeps the upstream's last piece (or its cut) until the test releases it, so what
 * reached the client meanwhile is observed without any timing:
 *  - the client holds the first MP3 bytes (and the exact cost headers) while the upstream has not
 *    finished, nothing is billed yet, and the complete answer comes with exactly one usage row;
 *  - an upstream cut mid-body charges nothing and the client's body breaks off;
 *  - a client that leaves mid-body pays the price fixed at the headers (the rule in binary-stream.ts);
 *  - document translation streams too (its quantity is an upstream header), and the same route with a
 *    quantity only the whole answer gives is buffered: a cut is then a plain 502;
 *  - a streamed answer past the operation's max_bytes is refused, nothing charged;
 *  - a settle that fails once bytes went out cuts the client's connection (its body breaks off, never
 *    a whole file with an error appended), charges nothing, and leaves the hold to the sweeper.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { silentMp3 } from '../../src/sim/elevenlabs.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { docxOf } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectBrokenAnswer, expectUntouched } from '../helpers/native.js';

const BALANCE = 1_000_000_000n;
/** 135 characters: 9 s of simulated speech (15 characters a second), 345 MP3 frames in four pieces. */
const INPUT = 'The quick brown fox jumps over the lazy dog. '.repeat(3);
/** $0.10 per 1,000 characters (eleven_multilingual_v2): 135 x 100,000 nano-USD. */
const SPEECH_NANO = 13_500_000n;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
/** The simulator's x-metered-usage for the report below (test/e2e/documents-translate.test.ts), at 15,000 nano each. */
const DOCUMENT_CHARACTERS = 41;

function speech(t: TestGateway, key: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.url}/v1/audio/speech`, {
    method: 'POST', signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'eleven_multilingual_v2', voice: 'george', input: INPUT }),
  });
}

function translate(t: TestGateway, key: string, report: Buffer): Promise<Response> {
  const form = new FormData();
  form.append('document', new Blob([new Uint8Array(report)], { type: DOCX }), 'report.docx');
  return fetch(`${t.url}/v1/documents/translate?to=fr`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}

/** Lets the answers the simulator holds go on; how many were waiting. */
async function release(t: TestGateway): Promise<number> {
  return ((await (await fetch(`${t.sim.url}/__sim/release`, { method: 'POST' })).json()) as { released: number }).released;
}

/** The first body bytes the client receives. */
async function firstBytes(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Buffer> {
  const first = await reader.read();
  expect(first.done).toBe(false);
  return Buffer.from(first.value!);
}

/** The rest of a body, to its end. */
async function rest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(Buffer.from(r.value));
  return Buffer.concat(parts);
}

/** Waits (bounded) until the gateway has finished every request: billed or released. */
async function idle(t: TestGateway): Promise<void> {
  for (let i = 0; i < 400 && t.gw.runtime.inflight.size > 0; i++) await new Promise((r) => setTimeout(r, 25));
  expect(t.gw.runtime.inflight.size).toBe(0);
}

async function ledgerOf(t: TestGateway, accountId: string) {
  const account = await t.settled(accountId);
  const rows = (await t.usage(accountId)).data;
  return { account, rows: rows.map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model })) };
}

describeStore(`binary answers streamed through (${storeKind})`, () => {
  let t: TestGateway;
  let report: Buffer;
  beforeAll(async () => {
    t = await startTestGateway();
    report = await docxOf(['Quarterly report', 'Revenue grew by 12% — Ünïcödé 😀.']);
  });
  afterAll(async () => { await t?.dispose(); });
  afterEach(async () => {
    await release(t);
    await t.clearFaults();
  });

  it('sends the first MP3 bytes and the exact cost headers before the upstream has finished; completes only once billed', async () => {
    const account = await t.account('1');
    await t.fault({ hold_last_chunk: true, times: 1 }, 'eleven_multilingual_v2');
    const res = await speech(t, account.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('x-gateway-characters')).toBe('135');
    expect(res.headers.get('x-gateway-cost-usd')).toBe('0.0135');
    const reader = res.body!.getReader();
    const first = await firstBytes(reader);
    expect([first[0], first[1]]).toEqual([0xff, 0xfb]);
    // The upstream still holds its last piece: the answer is not complete, so nothing is billed yet.
    const during = await ledgerOf(t, account.id);
    expect(during.rows).toEqual([]);
    expect(during.account).toMatchObject({ openHolds: 1 });
    expect(await release(t)).toBe(1);
    const body = Buffer.concat([first, await rest(reader)]);
    expect(body.equals(silentMp3(INPUT.length / 15))).toBe(true);
    // The body's end is written only after the settle committed.
    const after = await ledgerOf(t, account.id);
    expect(after.rows).toEqual([{ kind: 'speech', unit: 'character', quantity: 135n, amount: SPEECH_NANO, model: 'eleven_multilingual_v2' }]);
    expect(after.account).toMatchObject({ balanceNano: BALANCE - SPEECH_NANO, heldNano: 0n, openHolds: 0 });
  });

  it('charges nothing when the upstream cuts the body mid-way; the client sees it break off, never a whole file', async () => {
    const account = await t.account('1');
    await t.fault({ truncate_after_chunks: 2, hold_last_chunk: true, times: 1 }, 'eleven_multilingual_v2');
    const res = await speech(t, account.key);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await firstBytes(reader);
    expect(await release(t)).toBe(1);
    await expect(rest(reader)).rejects.toThrow();
    await idle(t);
    await expectUntouched(t, account, BALANCE);
  });

  it('bills a client that leaves mid-body the price fixed at the headers (the upstream produced the work)', async () => {
    const account = await t.account('1');
    await t.fault({ hold_last_chunk: true, times: 1 }, 'eleven_multilingual_v2');
    const abort = new AbortController();
    const res = await speech(t, account.key, abort.signal);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await firstBytes(reader);
    abort.abort();
    await idle(t);
    const { account: view, rows } = await ledgerOf(t, account.id);
    expect(rows).toEqual([{ kind: 'speech', unit: 'character', quantity: 135n, amount: SPEECH_NANO, model: 'eleven_multilingual_v2' }]);
    expect(view).toMatchObject({ balanceNano: BALANCE - SPEECH_NANO, heldNano: 0n, openHolds: 0 });
  });

  it('streams a translated DOCX too: its charged characters are an upstream header, known before the body', async () => {
    const account = await t.account('1');
    await t.fault({ hold_last_chunk: true, times: 1 }, 'azure-document-translation');
    const res = await translate(t, account.key, report);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-characters')).toBe(String(DOCUMENT_CHARACTERS));
    expect(res.headers.get('x-gateway-cost-usd')).toBe('0.000615');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="report.fr.docx"; filename*=UTF-8''report.fr.docx`);
    const reader = res.body!.getReader();
    const first = await firstBytes(reader);
    expect(first.readUInt32LE(0)).toBe(0x04034b50);
    expect((await ledgerOf(t, account.id)).rows).toEqual([]);
    expect(await release(t)).toBe(1);
    await rest(reader);
    const after = await ledgerOf(t, account.id);
    expect(after.rows).toEqual([{ kind: 'documents-translate', unit: 'character', quantity: 41n, amount: 615_000n, model: 'document-translation' }]);
    expect(after.account).toMatchObject({ balanceNano: BALANCE - 615_000n, heldNano: 0n, openHolds: 0 });
  });

  it('cuts the client off when the settle fails after bytes went out: no whole file, nothing charged, the hold left to the sweeper', async () => {
    const account = await t.account('1');
    await t.fault({ hold_last_chunk: true, times: 1 }, 'eleven_multilingual_v2');
    const ledger = t.gw.runtime.ledger;
    const settle = ledger.settle.bind(ledger);
    // The store refuses this one settle (a failure settles are not retried through).
    ledger.settle = () => Promise.reject(new Error('the store refused the settle'));
    try {
      const res = await speech(t, account.key);
      expect(res.status).toBe(200);
      const holdId = res.headers.get('x-request-id')!;
      const reader = res.body!.getReader();
      await firstBytes(reader);
      expect(await release(t)).toBe(1);
      await expect(rest(reader)).rejects.toThrow();
      await idle(t);
      expect((await ledger.listUsage(account.id)).data).toEqual([]);
      // Read as its user sees it: a credit grant the flusher may have opened meanwhile is not a request's hold.
      expect(await t.settled(account.id)).toMatchObject({ balanceNano: BALANCE - SPEECH_NANO, heldNano: SPEECH_NANO, openHolds: 1 });
      // The sweeper gives the hold back once it expires (brought forward here).
      expect(await ledger.extendHold(holdId, 1)).toBe(true);
      await new Promise((r) => setTimeout(r, 20));
      expect(await ledger.sweepExpiredHolds()).toBe(1);
      await expectUntouched(t, account, BALANCE);
    } finally {
      ledger.settle = settle;
    }
  });
});

describeStore(`binary answers buffered when only the whole answer gives the price, and bounded (${storeKind})`, () => {
  let t: TestGateway;
  let report: Buffer;
  beforeAll(async () => {
    // The same route billing the quantity its translator reports from the whole file: not known at the headers.
    const copy = await copyConfig();
    await copy.editYaml('routes/documents-translate.yaml', (d) => { d.meter.character.source = { translator: 'characters' }; });
    // Speech answers bounded below the 143,865 bytes of the test's MP3 (pieces of 35,967).
    await copy.editYaml('providers/elevenlabs.yaml', (d) => { d.operations.speech.answer.max_bytes = 50_000; });
    t = await startTestGateway({ configFile: copy.configFile });
    report = await docxOf(['Quarterly report', 'Revenue grew by 12% — Ünïcödé 😀.']);
  });
  afterAll(async () => { await t?.dispose(); });

  it('sends the file after the settle with its cost headers; a cut answer is a plain 502, nothing charged', async () => {
    const account = await t.account('1');
    const ok = await translate(t, account.key, report);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-gateway-characters')).toBe(String(DOCUMENT_CHARACTERS));
    expect(ok.headers.get('x-gateway-cost-usd')).toBe('0.000615');
    expect(Number(ok.headers.get('content-length'))).toBe((await ok.arrayBuffer()).byteLength);
    expect((await ledgerOf(t, account.id)).rows).toEqual([{ kind: 'documents-translate', unit: 'character', quantity: 41n, amount: 615_000n, model: 'document-translation' }]);
    const other = await t.account('1');
    await t.fault({ truncate_after_chunks: 2, times: 1 }, 'azure-document-translation');
    const cut = await translate(t, other.key, report);
    expect(cut.status).toBe(502);
    expect(((await cut.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
    await expectUntouched(t, other, BALANCE);
  });

  it('refuses a streamed answer past max_bytes: declared, before any byte (502); undeclared, the body breaks off; nothing charged', async () => {
    const account = await t.account('1');
    const declared = await speech(t, account.key);
    expect(declared.status).toBe(502);
    expect(((await declared.json()) as { error: { message: string } }).error.message).toBe('The upstream provider sent a file larger than 50000 bytes.');
    // In pieces (chunked, no Content-Length): the first piece goes out, the second crosses the bound.
    await t.fault({ chunk_delay_ms: 1, times: 1 }, 'eleven_multilingual_v2');
    await expectBrokenAnswer(await speech(t, account.key));
    await idle(t);
    await expectUntouched(t, account, BALANCE);
  });
});
