/**
 * A finished stream reads the upstream body to its end, so the upstream connection goes back to the
 * pool: destroying the body after the last event aborted the request, and when the end of the HTTP
 * framing came in a later packet (end_delay_ms) the connection was closed and every stream paid for
 * a new one. The upstream body is decoded across its pieces: a character whose UTF-8 bytes arrive
 * in two pieces, and a byte-order mark opening the stream, reach the client as the upstream meant.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { postChat, readSse, type Account } from '../../helpers/chat.js';

describe('streaming forward: upstream connections', () => {
  let t: TestGateway;
  let a: Account;

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('1')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  it('reuses one upstream connection for streams sent one after another, even when the body ends after the last event', async () => {
    await t.fault({ end_delay_ms: 30 });
    const before = t.sim.connections;
    for (let i = 0; i < 5; i++) {
      const res = await postChat(a, { model: 'gpt-4o-mini', stream: true, max_tokens: 8, messages: [{ role: 'user', content: `stream ${i}` }] });
      expect(res.status).toBe(200);
      expect((await readSse(res)).done).toBe(true);
    }
    expect(t.sim.requests).toBeGreaterThanOrEqual(5);
    expect(t.sim.connections - before).toBe(1);
    await t.clearFaults();
  });
});

describe('streaming forward: decoding the upstream body', () => {
  let t: TestGateway;
  let a: Account;
  let upstream: http.Server;
  const text = 'Grüße, 世界 🎉';

  beforeAll(async () => {
    // An upstream that writes its stream a few bytes at a time, so characters split between pieces.
    upstream = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, usage: unknown = null): string => `data: ${JSON.stringify({
        id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini',
        choices: usage ? [] : [{ index: 0, delta, finish_reason: null }], usage,
      })}\n\n`;
      const body = Buffer.from(`\uFEFF${chunk({ role: 'assistant', content: '' })}${[...text].map((c) => chunk({ content: c })).join('')}${chunk({}, { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 })}data: [DONE]\n\n`);
      void (async () => {
        for (let i = 0; i < body.length; i += 5) { res.write(body.subarray(i, i + 5)); await sleep(0); }
        res.end();
      })();
    });
    await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', () => ok()));
    const port = (upstream.address() as { port: number }).port;
    t = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-test-not-real', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    a = { ...(await t.account('1')), t };
  });
  afterAll(async () => { await t?.dispose(); upstream?.closeAllConnections(); await new Promise((ok) => upstream?.close(ok)); });

  it('joins the bytes of a character split between pieces, and drops the opening byte-order mark', async () => {
    const res = await postChat(a, { model: 'gpt-4o-mini', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const read = await readSse(res);
    expect(read.done).toBe(true);
    expect(read.errors).toEqual([]);
    expect(read.text).toBe(text);
    expect(read.text).not.toContain('\uFFFD');
  });
});
