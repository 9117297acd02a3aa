/**
 * The fault table of the foundation, repeated for the responses and messages formats: upstream
 * 5xx, an error-only stream, disconnects before the first byte and mid-stream, a cut stream.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SseParser } from '../../src/translate/sse.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { copyConfig, singleAttempt } from '../helpers/config.js';
import { settled, type Account } from '../helpers/chat.js';

interface FormatCase {
  name: string;
  path: string;
  headers: Record<string, string>;
  body(stream: boolean, extra?: Record<string, unknown>): Record<string, unknown>;
  /** The text of a content delta event, if it is one. */
  delta(data: Record<string, unknown>): string | null;
  errorShape: Record<string, unknown>;
}

const FORMATS: FormatCase[] = [
  {
    name: 'messages', path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01' },
    body: (stream, extra) => ({ model: 'claude-haiku-4-5', max_tokens: 300, stream, messages: [{ role: 'user', content: 'faulty messages' }], ...extra }),
    delta: (d) => (d.type === 'content_block_delta' ? String((d.delta as { text?: string }).text ?? '') : null),
    errorShape: { type: 'error', error: { type: 'api_error', code: 'upstream_error' } },
  },
  {
    name: 'responses', path: '/v1/responses', headers: {},
    body: (stream, extra) => ({ model: 'gpt-4o', max_output_tokens: 300, stream, input: 'faulty responses', ...extra }),
    delta: (d) => (d.type === 'response.output_text.delta' ? String(d.delta) : null),
    errorShape: { error: { type: 'server_error', code: 'upstream_error' } },
  },
];

async function readNamed(res: Response, f: FormatCase, stopAfter?: { deltas: number; abort: AbortController }): Promise<{ text: string; events: string[] }> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  const out = { text: '', events: [] as string[] };
  let deltas = 0;
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return out;
    for (const event of parser.push(decoder.decode(value, { stream: true }))) {
      const data = JSON.parse(event.data) as Record<string, unknown>;
      out.events.push(String(data.type));
      const text = f.delta(data);
      if (text !== null) { out.text += text; deltas++; }
      if (stopAfter && deltas >= stopAfter.deltas) {
        stopAfter.abort.abort();
        await reader.cancel().catch(() => undefined);
        return out;
      }
    }
  }
}

describeStore('fault table for the responses and messages formats', () => {
  let t: TestGateway;
  let a: Account;

  beforeAll(async () => {
    // What one failed attempt costs: retries and fail-over are test/e2e/routing-*.test.ts.
    const copy = await copyConfig();
    await singleAttempt(copy);
    t = await startTestGateway({ configFile: copy.configFile });
    a = { ...(await t.account('2')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  const post = (f: FormatCase, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
    fetch(`${t.url}${f.path}`, { method: 'POST', signal, body: JSON.stringify(body), headers: { 'x-api-key': a.key, 'content-type': 'application/json', ...f.headers } });

  async function unchanged(run: () => Promise<void>): Promise<void> {
    const before = await settled(a);
    await run();
    const after = await settled(a);
    expect(after.balanceNano).toBe(before.balanceNano);
    expect(after.rows).toBe(before.rows);
  }

  for (const f of FORMATS) {
    for (const stream of [false, true]) {
      it(`${f.name}: upstream 5xx is an error in the format's shape, nothing charged (stream: ${stream})`, async () => {
        await t.fault({ status: 500, times: 1 });
        await unchanged(async () => {
          const res = await post(f, f.body(stream));
          expect(res.status).toBe(502);
          expect(await res.json()).toMatchObject(f.errorShape);
        });
      });
    }

    it(`${f.name}: an error-only stream charges nothing`, async () => {
      await t.fault({ error_after_chunks: 0, times: 1 });
      await unchanged(async () => {
        const res = await post(f, f.body(true));
        expect(res.status).toBe(502);
        expect(await res.json()).toMatchObject(f.errorShape);
      });
      // Opening events (with up-front usage), then the provider error: still only an error, and a plain
      // HTTP one, since the opening events wait for the first content (issue 29 item 3).
      await t.fault({ error_after_chunks: 2, times: 1 });
      await unchanged(async () => {
        const res = await post(f, f.body(true));
        expect(res.status).toBe(502);
        expect(await res.json()).toMatchObject(f.errorShape);
      });
    });

    it(`${f.name}: a client that leaves before the first byte pays nothing`, async () => {
      await t.fault({ latency_ms: 400, times: 1 });
      await unchanged(async () => {
        const abort = new AbortController();
        const pending = post(f, f.body(true), abort.signal).catch((e: unknown) => e);
        await new Promise((r) => setTimeout(r, 100));
        abort.abort();
        expect(await pending).toBeInstanceOf(Error);
        await new Promise((r) => setTimeout(r, 500));
      });
    });

    it(`${f.name}: a client that leaves mid-stream pays input plus the output delivered`, async () => {
      await t.fault({ chunk_delay_ms: 30, times: 1 });
      const abort = new AbortController();
      const res = await post(f, f.body(true), abort.signal);
      const { text } = await readNamed(res, f, { deltas: 4, abort });
      expect(text.length).toBeGreaterThan(0);
      const after = await settled(a);
      const details = after.last!.details as { input: number; output: number; counted_by?: string };
      expect(details.input).toBeGreaterThan(0);
      expect(details.output).toBeGreaterThanOrEqual(4);
      expect(details.output).toBeLessThan(100);
      expect(details.counted_by).toBe('gateway_tokenizer');
      expect(after.last!.amountNano).toBeGreaterThan(0n);
    });

    it(`${f.name}: a stream cut after content pays input plus the output delivered`, async () => {
      await t.fault({ truncate_after_chunks: 8, times: 1 });
      const before = await settled(a);
      const res = await post(f, f.body(true));
      const { text, events } = await readNamed(res, f);
      expect(text.length).toBeGreaterThan(0);
      expect(events.at(-1)).toBe('error');
      const after = await settled(a);
      expect(after.rows).toBe(before.rows + 1);
      expect((after.last!.details as { counted_by?: string }).counted_by).toBe('gateway_tokenizer');
    });
  }
});
