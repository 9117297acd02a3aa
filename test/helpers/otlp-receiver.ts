/**
 * A loopback OTLP/HTTP trace receiver for the trace tests (issue 33 item 1): it takes what
 * @opentelemetry/exporter-trace-otlp-http sends (POST /v1/traces, OTLP's JSON encoding) and keeps
 * every span, its attributes flattened to plain values. With `hang`, it reads each export and never
 * answers: a collector that stopped responding.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP JSON attribute value (AnyValue): one of its fields is set; 64-bit integers may come as strings. */
interface AnyValue { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean }
interface KeyValue { key: string; value: AnyValue }
interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number;
  attributes?: KeyValue[]; events?: Array<{ name: string; attributes?: KeyValue[] }>; status?: { code?: number; message?: string };
}
interface OtlpExport { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> }

/** A received span, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  events: Array<{ name: string; attributes: Record<string, string | number | boolean> }>;
  status: { code: number; message?: string };
  resource: Record<string, string | number | boolean>;
}

/** OTLP SpanKind values (opentelemetry-proto trace.proto). */
export const SPAN_KIND = { server: 2, client: 3 } as const;

function plain(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

function attributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (exports go to `/v1/traces` under it). */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (answered or not), and the raw bodies. */
  exports: number;
  bodies: string[];
  /** Waits until `pick` finds at least `count` spans; returns them. */
  waitFor(pick: (s: ReceivedSpan) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1. */
export async function startOtlpReceiver(opts: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const receiver: Omit<OtlpReceiver, 'url'> & { url: string } = {
    url: '', spans: [], exports: 0, bodies: [],
    async waitFor(pick, count = 1, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = receiver.spans.filter(pick);
        if (found.length >= count || Date.now() > until) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.exports += 1;
      const text = Buffer.concat(chunks).toString('utf8');
      receiver.bodies.push(text);
      if (opts.hang) return; // never answered
      if (req.method !== 'POST' || req.url !== '/v1/traces') { res.writeHead(404).end(); return; }
      const body = JSON.parse(text) as OtlpExport;
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            receiver.spans.push({
              traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind,
              attributes: attributes(s.attributes), events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
              status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) }, resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return receiver;
}
