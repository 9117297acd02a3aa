/**
 * The access log names each upstream attempt (issue 29 item 7): deployment, outcome (ok, a status, or
 * how it failed) and milliseconds, on the request's one line. The gateway's log is captured.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { addOpenaiOfferings, chatOffering } from '../helpers/routing.js';

describeStore('the access log of a request with several attempts', () => {
  let t: TestGateway;
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (text: string) => { for (const line of text.split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>); } };

  beforeAll(async () => {
    const copy = await copyConfig();
    await addOpenaiOfferings(copy, [chatOffering('log-primary', { fallbacks: ['log-fallback'] }), chatOffering('log-fallback')]);
    t = await startTestGateway({ configFile: copy.configFile, env: { GATEWAY_LOG_LEVEL: 'info' }, logDestination: destination });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  it('lists each attempt with its deployment, outcome and duration', async () => {
    const a = await t.account('1');
    await t.fault({ status: 503 }, 'log-primary');
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'log-primary', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    await res.text();
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = lines.find((l) => l.msg === 'request' && l.request_id === id);
      if (!line) await new Promise((r) => setTimeout(r, 20));
    }
    expect(line).toMatchObject({ status: 200, model: 'log-fallback' });
    const attempts = line!.attempts as Array<{ deployment: string; provider: string; outcome: string; ms: number }>;
    expect(attempts.map((x) => [x.deployment, x.outcome])).toEqual([['openai/log-primary', '503'], ['openai/log-primary', '503'], ['openai/log-fallback', 'ok']]);
    for (const x of attempts) {
      expect(x.provider).toBe('openai');
      expect(x.ms).toBeGreaterThanOrEqual(0);
    }
    // No key, no prompt: the line is the gateway's own fields.
    expect(JSON.stringify(line)).not.toContain(a.key);
    expect(JSON.stringify(line)).not.toContain('Hello');
  });
});
