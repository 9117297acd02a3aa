/**
 * Traces off (issue 33 item 1): with no OTLP endpoint variable, nothing is sent and nothing of the
 * OpenTelemetry SDK is loaded. Every @opentelemetry package the gateway could import is mocked by a
 * pass-through that records its loading; the second test turns traces on in the same process and
 * sees the loads, so the first one's "nothing loaded" can fail.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { tracingLoads } from '../../src/observability/traces.js';

const seen = vi.hoisted(() => ({ loaded: new Set<string>() }));
vi.mock('@opentelemetry/api', async (original) => { seen.loaded.add('api'); return original(); });
vi.mock('@opentelemetry/sdk-trace-base', async (original) => { seen.loaded.add('sdk-trace-base'); return original(); });
vi.mock('@opentelemetry/exporter-trace-otlp-http', async (original) => { seen.loaded.add('exporter-trace-otlp-http'); return original(); });
vi.mock('@opentelemetry/resources', async (original) => { seen.loaded.add('resources'); return original(); });

const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

async function chat(t: TestGateway, key: string): Promise<void> {
  const res = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

describeStore('traces without an OTLP endpoint', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => { receiver = await startOtlpReceiver(); });
  afterAll(async () => { await receiver?.close(); });

  it('loads nothing of OpenTelemetry and sends nothing', async () => {
    const t = await startTestGateway({ env: { OTEL_SERVICE_NAME: 'not-traced', OTEL_TRACES_SAMPLER: 'always_on' } });
    try {
      const a = await t.account('1');
      await chat(t, a.key);
      await chat(t, a.key);
      expect(t.gw.runtime.tracing).toBeUndefined();
      // With traces off the gateway takes no part in tracing: the client's traceparent is not passed on.
      const upstream = await fetch(`${t.sim.url}/__sim/requests?model=gpt-4o-mini`);
      const records = ((await upstream.json()) as { data: Array<{ traceparent?: string }> }).data;
      expect(records.length).toBeGreaterThanOrEqual(2);
      expect(records.map((r) => r.traceparent)).toEqual(records.map(() => undefined));
    } finally {
      await t.dispose();
    }
    expect(receiver.exports).toBe(0);
    expect(tracingLoads()).toBe(0);
    expect([...seen.loaded]).toEqual([]);
  }, 60_000);

  it('loads the SDK once an endpoint is set (the check above can fail)', async () => {
    const t = await startTestGateway({ env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '50' } });
    try {
      const a = await t.account('1');
      await chat(t, a.key);
      await t.gw.runtime.tracing!.flush();
      const spans = await receiver.waitFor((s) => s.kind === SPAN_KIND.server && s.traceId === traceparent.split('-')[1]);
      expect(spans).toHaveLength(1);
    } finally {
      await t.dispose();
    }
    expect(tracingLoads()).toBe(1);
    expect([...seen.loaded].sort()).toEqual(['api', 'exporter-trace-otlp-http', 'resources', 'sdk-trace-base']);
  }, 60_000);
});
