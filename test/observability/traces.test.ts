/**
 * The trace settings read from the standard OTEL_* variables, the W3C traceparent parser, and the
 * samplers they choose (issue 33 item 1). The end-to-end behaviour is test/e2e/traces.test.ts.
 */
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { samplerOf } from '../../src/observability/otel.js';
import { DEFAULT_SERVICE_NAME, formatTraceparent, parseOtlpHeaders, parseTraceparent, samplerFromEnv, traceSettingsFromEnv } from '../../src/observability/traces.js';

describe('traceSettingsFromEnv', () => {
  it('is off without an endpoint variable, or when the SDK or the traces exporter is disabled', () => {
    expect(traceSettingsFromEnv({})).toBeNull();
    expect(traceSettingsFromEnv({ OTEL_SERVICE_NAME: 'gw', OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeNull();
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
  });

  it('appends /v1/traces to the general endpoint and takes the traces endpoint as given', () => {
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })!.url).toBe('http://127.0.0.1:4318/v1/traces');
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/otlp' })!.url).toBe('http://127.0.0.1:4318/otlp/v1/traces');
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/custom' })!.url).toBe('http://127.0.0.1:4318/custom');
  });

  it('reads the service name, the export timeout, the batch limits and the export headers', () => {
    const s = traceSettingsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SERVICE_NAME: 'edge-gw', OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_BSP_MAX_QUEUE_SIZE: '64', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=ai%20gw,x-env=test', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-env=traces',
    })!;
    expect(s).toMatchObject({ serviceName: 'edge-gw', exportTimeoutMs: 2500, batch: { scheduledDelayMs: 100, maxQueueSize: 64, maxExportBatchSize: 64 } });
    expect(s.headers).toEqual({ 'x-team': 'ai gw', 'x-env': 'traces' });
    const defaults = traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_BSP_SCHEDULE_DELAY: 'soon' })!;
    expect(defaults).toMatchObject({ serviceName: DEFAULT_SERVICE_NAME, exportTimeoutMs: 10_000, batch: { scheduledDelayMs: 5000, maxQueueSize: 2048, maxExportBatchSize: 512 } });
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'x', OTEL_EXPORTER_OTLP_TIMEOUT: '1', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '7' })!.exportTimeoutMs).toBe(7);
  });

  it('parses OTLP header lists, skipping malformed pairs', () => {
    expect(parseOtlpHeaders('a=1, b = two ,=x,novalue,c=%E2%9C%93')).toEqual({ a: '1', b: 'two', c: '✓' });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});

describe('samplers', () => {
  // The SDK's ratio sampler XORs the id's 32-bit words: this one comes to 0xfffffffe, sampled by no ratio below 1.
  const traceId = 'ffffffff000000000000000000000001';
  const sampledParent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true });
  const unsampledParent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE, isRemote: true });
  const decide = (env: Record<string, string>, parent = ROOT_CONTEXT): SamplingDecision =>
    samplerOf(samplerFromEnv(env)).shouldSample(parent, traceId, 'chat', SpanKind.SERVER, {}, []).decision;

  it('defaults to parentbased_always_on, also for an unknown name', () => {
    expect(samplerFromEnv({})).toEqual({ name: 'parentbased_always_on', ratio: 1 });
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'sometimes' }).name).toBe('parentbased_always_on');
    expect(decide({})).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({}, unsampledParent)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('parentbased_traceidratio follows the parent and samples roots by the ratio', () => {
    const env = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' };
    expect(samplerFromEnv(env)).toEqual({ name: 'parentbased_traceidratio', ratio: 0.25 });
    expect(decide(env)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(env, sampledParent)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ ...env, OTEL_TRACES_SAMPLER_ARG: '1' })).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it('traceidratio ignores the parent; always_off samples nothing; a bad ratio is 1', () => {
    expect(decide({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }, sampledParent)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_off' }, sampledParent)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_on' }, unsampledParent)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }).ratio).toBe(1);
  });
});

describe('traceparent', () => {
  it('parses a valid header and formats it back', () => {
    const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const parsed = parseTraceparent(header);
    expect(parsed).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 });
    expect(formatTraceparent(parsed!)).toBe(header);
    // A later version may add fields: they are ignored.
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra')).toMatchObject({ flags: 0 });
  });

  it('refuses what W3C Trace Context calls invalid', () => {
    for (const bad of [
      undefined, ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'], '',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // version ff
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // zero trace id
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // zero span id
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // upper case
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', // version 00 has four fields
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
    ]) expect(parseTraceparent(bad as string | undefined), String(bad)).toBeNull();
  });
});
