/**
 * OpenTelemetry traces end to end (issue 33 item 1): a gateway with OTEL_EXPORTER_OTLP_ENDPOINT set
 * exports, to a loopback OTLP/HTTP receiver, one server span per request with the GenAI and gateway
 * attributes and a client child per upstream attempt (two on a failed-over request); the client's
 * trace id is continued and the upstream (the simulator, which records the header) gets a
 * `traceparent` naming the attempt's span. No prompt, answer or key by default; the text with
 * `observability.traces.content: true`. A collector that hangs does not stop requests.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { addOpenaiOfferings, chatOffering, type SimRequest } from '../helpers/routing.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** An obviously fake vendor key: the gateway sends it to the test's own simulator. */
const VENDOR_KEY = 'sk-fake-traces-test-0123456789';

/** The requests `vendor` received for `model`, in arrival order. */
async function vendorRequests(vendor: Simulator, model: string): Promise<SimRequest[]> {
  const res = await fetch(`${vendor.url}/__sim/requests?model=${encodeURIComponent(model)}`);
  return ((await res.json()) as { data: SimRequest[] }).data;
}

/** The gateway's environment for traces to `receiver`, exporting every 50 ms. */
const traceEnv = (receiver: OtlpReceiver, extra: Record<string, string> = {}): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gateway-under-test', OTEL_BSP_SCHEDULE_DELAY: '50', ...extra,
});

/** The request span of `traceId` and its attempt children, once exported. */
async function trace(t: TestGateway, receiver: OtlpReceiver, traceId: string, attempts: number): Promise<{ server: ReceivedSpan; children: ReceivedSpan[] }> {
  await t.gw.runtime.tracing!.flush();
  const [server] = await receiver.waitFor((s) => s.traceId === traceId && s.kind === SPAN_KIND.server);
  expect(server, `a server span of trace ${traceId}`).toBeDefined();
  const children = await receiver.waitFor((s) => s.traceId === traceId && s.parentSpanId === server!.spanId, attempts);
  return { server: server!, children };
}

describeStore('traces of requests (OTLP/HTTP to a loopback receiver)', () => {
  let t: TestGateway;
  let receiver: OtlpReceiver;
  let account: { id: string; key: string; keyId: string };
  let vendor: Simulator;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // OpenAI's offerings on a simulator of the test's own, with a (fake) vendor key: the spans must never carry it.
    vendor = await startSimulator();
    const copy = await copyConfig();
    // A failed-over request: the primary answers 503 once and is not retried (retry_same_deployment 0), the fallback serves.
    await addOpenaiOfferings(copy, [chatOffering('trace-primary', { fallbacks: ['trace-fallback'], routing: { retry_same_deployment: 0 } }), chatOffering('trace-fallback')]);
    t = await startTestGateway({ configFile: copy.configFile, env: traceEnv(receiver, { OPENAI_API_KEY: VENDOR_KEY, OPENAI_BASE_URL: `${vendor.url}/v1` }) });
    const { id } = await t.account('5');
    const created = await t.gw.runtime.ledger.createKey(id);
    account = { id, key: created.key, keyId: created.id };
  }, 60_000);
  afterAll(async () => { await t?.dispose(); await receiver?.close(); await vendor?.close(); });

  it('makes each request a span with the GenAI and gateway attributes, continuing the client trace to the upstream', async () => {
    const traceId = hex(16);
    const parentSpanId = hex(8);
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0, defaultHeaders: { traceparent: `00-${traceId}-${parentSpanId}-01` } });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    const { server, children } = await trace(t, receiver, traceId, 1);

    expect(server.parentSpanId).toBe(parentSpanId);
    expect(server.name).toBe('chat gpt-4o-mini');
    expect(server.resource['service.name']).toBe('gateway-under-test');
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': completion.usage!.prompt_tokens, 'gen_ai.usage.output_tokens': completion.usage!.completion_tokens,
      'gateway.account_id': account.id, 'gateway.key_id': account.keyId, 'gateway.route': 'chat-completions',
      'gateway.deployment': 'openai/gpt-4o-mini', 'gateway.attempts': 1, 'http.response.status_code': 200,
    });
    // The charge the ledger settled, as a double.
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(server.attributes['gateway.cost_usd']).toBeCloseTo(Number(row!.amountNano) / 1e9, 12);
    expect(server.attributes['gateway.cost_usd']).toBeGreaterThan(0);

    expect(children).toHaveLength(1);
    const attempt = children[0]!;
    expect(attempt.kind).toBe(SPAN_KIND.client);
    expect(attempt.attributes).toMatchObject({ 'gateway.deployment': 'openai/gpt-4o-mini', 'gateway.attempt': 1, 'gateway.outcome': 'ok', 'http.response.status_code': 200 });
    // The upstream got the attempt's context: same trace, the attempt span as its parent.
    const seen = (await vendorRequests(vendor, 'gpt-4o-mini')).at(-1)!;
    expect(seen.traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
  });

  it('gives a streamed request its span and usage too', async () => {
    const traceId = hex(16);
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0, defaultHeaders: { traceparent: `00-${traceId}-${hex(8)}-01` } });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Stream it' }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const { server, children } = await trace(t, receiver, traceId, 1);
    expect(server.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': usage!.prompt_tokens, 'gen_ai.usage.output_tokens': usage!.completion_tokens, 'gateway.attempts': 1 });
    expect(children).toHaveLength(1);
  });

  it('gives a failed-over request one child per attempt', async () => {
    const traceId = hex(16);
    const set = await fetch(`${vendor.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'trace-primary', fault: { status: 503, times: 1 } }) });
    expect(set.status).toBeLessThan(300);
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
      body: JSON.stringify({ model: 'trace-primary', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const { server, children } = await trace(t, receiver, traceId, 2);
    expect(server.attributes).toMatchObject({ 'gateway.attempts': 2, 'gateway.deployment': 'openai/trace-fallback', 'gen_ai.request.model': 'trace-primary', 'gen_ai.response.model': 'trace-fallback' });
    const byNumber = [...children].sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
    expect(byNumber.map((s) => [s.attributes['gateway.deployment'], s.attributes['gateway.outcome']])).toEqual([['openai/trace-primary', '503'], ['openai/trace-fallback', 'ok']]);
    expect(byNumber[0]!.status.code).toBe(2); // STATUS_CODE_ERROR
    expect(byNumber[0]!.attributes['error.type']).toBe('503');
    // Each attempt sent its own span's context.
    const primary = (await vendorRequests(vendor, 'trace-primary')).at(-1)!;
    const fallback = (await vendorRequests(vendor, 'trace-fallback')).at(-1)!;
    expect([primary.traceparent, fallback.traceparent]).toEqual(byNumber.map((s) => `00-${traceId}-${s.spanId}-01`));
  });

  it('records nothing for a client trace that is not sampled, and passes its context on unsampled', async () => {
    const traceId = hex(16);
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-00` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Not sampled' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    // parentbased_always_on (the default sampler) follows the client's decision.
    const seen = (await vendorRequests(vendor, 'gpt-4o-mini')).at(-1)!;
    expect(seen.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    await t.gw.runtime.tracing!.flush();
    expect(receiver.spans.filter((s) => s.traceId === traceId)).toEqual([]);
    expect(receiver.bodies.join('\n')).not.toContain(traceId);
  });

  it('marks a request that failed upstream as an error, each attempt with its status', async () => {
    const traceId = hex(16);
    const set = await fetch(`${vendor.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'trace-fallback', fault: { status: 500, times: 3 } }) });
    expect(set.status).toBeLessThan(300);
    try {
      const res = await fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
        body: JSON.stringify({ model: 'trace-fallback', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(res.status).toBeGreaterThanOrEqual(500);
      const body = await res.json() as { error: { code: string } };
      const { server } = await trace(t, receiver, traceId, 1);
      expect(server.status.code).toBe(2); // STATUS_CODE_ERROR
      expect(server.attributes).toMatchObject({ 'http.response.status_code': res.status, 'error.type': body.error.code, 'gateway.cost_usd': 0 });
      const attempts = Number(server.attributes['gateway.attempts']);
      expect(attempts).toBeGreaterThanOrEqual(1);
      const children = await receiver.waitFor((s) => s.traceId === traceId && s.parentSpanId === server.spanId, attempts);
      expect(children).toHaveLength(attempts);
      for (const c of children) expect([c.attributes['gateway.outcome'], c.attributes['http.response.status_code'], c.status.code]).toEqual(['500', 500, 2]);
    } finally {
      await fetch(`${vendor.url}/__sim/faults`, { method: 'DELETE' });
    }
  });

  it('gives a refused request its span, without an account', async () => {
    const traceId = hex(16);
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: 'Bearer gw-not-a-real-key-000000', 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(401);
    const body = await res.json() as { error: { code: string } };
    const { server, children } = await trace(t, receiver, traceId, 0);
    expect(server.status.code).toBe(0); // a 4xx is the client's: not a server error
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': body.error.code, 'gateway.attempts': 0, 'gateway.route': 'chat-completions' });
    expect(server.attributes['gateway.account_id']).toBeUndefined();
    expect(children).toEqual([]);
    expect(receiver.bodies.join('\n')).not.toContain('gw-not-a-real-key');
  });

  it('starts a new trace when the client sends none, or an invalid one', async () => {
    const before = receiver.spans.length;
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', traceparent: `00-${'0'.repeat(32)}-${hex(8)}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const id = res.headers.get('x-request-id');
    await res.text();
    await t.gw.runtime.tracing!.flush();
    const [server] = await receiver.waitFor((s) => s.kind === SPAN_KIND.server && s.attributes['gateway.request_id'] === id);
    expect(server).toBeDefined();
    expect(server!.parentSpanId).toBe('');
    expect(server!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(server!.traceId).not.toBe('0'.repeat(32));
    expect(receiver.spans.length).toBeGreaterThan(before);
  });

  it('puts no prompt, no answer and no key in spans by default', async () => {
    const secret = 'zebra-quartz-271';
    const traceId = hex(16);
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Repeat ${secret}` }] }),
    });
    const answer = await res.text();
    expect(answer).toContain(secret); // the simulator echoes the prompt: the answer text carries it too
    const { server } = await trace(t, receiver, traceId, 1);
    expect(server.events).toEqual([]);
    expect((await vendorRequests(vendor, 'gpt-4o-mini')).at(-1)!.key).toBe(VENDOR_KEY);
    const exported = receiver.bodies.join('\n');
    expect(exported).toContain(traceId);
    expect(exported).not.toContain(secret);
    expect(exported).not.toContain(account.key);
    expect(exported).not.toContain(VENDOR_KEY);
  });
});

describeStore('traces with observability.traces.content: true', () => {
  let t: TestGateway;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.observability = { traces: { content: true } }; });
    t = await startTestGateway({ configFile: copy.configFile, env: traceEnv(receiver) });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); await receiver?.close(); });

  it('puts the prompt and the answer text on the request span, never the key', async () => {
    const a = await t.account('1');
    const traceId = hex(16);
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0, defaultHeaders: { traceparent: `00-${traceId}-${hex(8)}-01` } });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Tell me about otters' }] });
    const { server } = await trace(t, receiver, traceId, 1);
    const prompt = server.events.find((e) => e.name === 'gen_ai.content.prompt');
    const answer = server.events.find((e) => e.name === 'gen_ai.content.completion');
    expect(String(prompt?.attributes['gen_ai.prompt'])).toContain('Tell me about otters');
    expect(answer?.attributes['gen_ai.completion']).toBe(completion.choices[0]!.message.content);
    expect(receiver.bodies.join('\n')).not.toContain(a.key);
  });
});

describe('traces to a collector that hangs', () => {
  let t: TestGateway;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver({ hang: true });
    // Exports wait up to 30 s for an answer that never comes; the queue holds 8 spans, the rest are dropped.
    t = await startTestGateway({ env: traceEnv(receiver, { OTEL_EXPORTER_OTLP_TIMEOUT: '30000', OTEL_BSP_SCHEDULE_DELAY: '10', OTEL_BSP_MAX_QUEUE_SIZE: '8', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4' }) });
  }, 60_000);
  afterAll(async () => { await receiver?.close(); await t?.dispose(); });

  it('completes every request while exports hang', async () => {
    const a = await t.account('5');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    // First one request, until its export is stuck at the receiver; then more than the queue holds.
    await ask();
    for (let i = 0; i < 200 && receiver.exports === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(receiver.exports).toBeGreaterThan(0);
    const answers = await Promise.all(Array.from({ length: 30 }, ask));
    expect(answers).toHaveLength(30);
    expect(answers.every((c) => c.choices[0]!.message.content)).toBe(true);
  });
});
