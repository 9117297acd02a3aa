/**
 * A loopback fake of the OpenAI-compatible vendors (issue 32 item 1), one server for all of them, each
 * under its own path prefix (test/fixtures/compatible-vendors/vendors.json). It answers chat completions
 * as each vendor reports usage (OpenAI's way, DeepSeek's cache-hit names, Mistral's usage in the last
 * chunk with stream_options refused, xAI's usage before an empty last chunk, none at all) and records
 * every request so the test checks the path, the auth header and the body the gateway sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';

/** How a vendor reports usage. */
export type UsageStyle = 'openai' | 'deepseek' | 'always' | 'before-last' | 'none';

/** One vendor as the fixture describes it. */
export interface FakeVendor {
  provider: string;
  /** The gateway's environment for it; a value starting with `/` is a path on the fake. */
  env: Record<string, string>;
  path: string;
  /** The auth header the gateway must send, and its value (null: no such header). */
  auth: [string, string | null];
  model: string;
  upstream: string;
  usage: UsageStyle;
  prices: { input: string; output: string; cached?: string };
}

/** A request the fake received. */
export interface FakeRequest { path: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }

/** The fixture's vendors. */
export function fakeVendors(): FakeVendor[] {
  const url = new URL('../fixtures/compatible-vendors/vendors.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { vendors: FakeVendor[] }).vendors;
}

/** The counts every answer reports (where the vendor reports any). */
export const FAKE_USAGE = { input: 100, output: 20, cached: 30, reasoning: 8 } as const;

/** The answer's text, streamed in these pieces. */
export const FAKE_PIECES = ['Hello', ' from', ' the', ' fake'] as const;

function usageOf(style: UsageStyle): Record<string, unknown> | null {
  const { input, output, cached, reasoning } = FAKE_USAGE;
  if (style === 'none') return null;
  if (style === 'deepseek') {
    return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output, prompt_cache_hit_tokens: cached, prompt_cache_miss_tokens: input - cached, completion_tokens_details: { reasoning_tokens: reasoning } };
  }
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output, prompt_tokens_details: { cached_tokens: cached }, completion_tokens_details: { reasoning_tokens: reasoning } };
}

function jsonAnswer(vendor: FakeVendor, body: Record<string, unknown>): Record<string, unknown> {
  const tools = body.tools as Array<{ function: { name: string } }> | undefined;
  const message = tools?.length
    ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_fake_1', type: 'function', function: { name: tools[0]!.function.name, arguments: '{"city":"Paris"}' } }] }
    : { role: 'assistant', content: FAKE_PIECES.join(''), ...(vendor.usage === 'deepseek' ? { reasoning_content: 'Thinking it over.' } : {}) };
  const usage = usageOf(vendor.usage);
  return {
    id: 'chatcmpl-fake', object: 'chat.completion', created: 1_700_000_000, model: body.model,
    choices: [{ index: 0, message, finish_reason: tools?.length ? 'tool_calls' : 'stop' }], ...(usage ? { usage } : {}),
  };
}

function chunk(body: Record<string, unknown>, choices: unknown[], extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, choices, ...extra })}\n\n`;
}

/** The SSE body of a streamed answer, with usage where and when the vendor sends it. */
function streamAnswer(vendor: FakeVendor, body: Record<string, unknown>): string {
  const usage = usageOf(vendor.usage);
  const asked = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const frames = [chunk(body, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
  if (vendor.usage === 'deepseek') frames.push(chunk(body, [{ index: 0, delta: { reasoning_content: 'Thinking it over.' }, finish_reason: null }]));
  for (const piece of FAKE_PIECES) frames.push(chunk(body, [{ index: 0, delta: { content: piece }, finish_reason: null }]));
  const finish = { index: 0, delta: {}, finish_reason: 'stop' };
  if (vendor.usage === 'always') frames.push(chunk(body, [finish], { usage }));
  else frames.push(chunk(body, [finish]));
  if ((vendor.usage === 'openai' || vendor.usage === 'deepseek') && asked) frames.push(chunk(body, [], { usage }));
  if (vendor.usage === 'before-last' && asked) frames.push(chunk(body, [], { usage }), chunk(body, []));
  frames.push('data: [DONE]\n\n');
  return frames.join('');
}

/** A running fake: its origin, what it received, and close. */
export interface CompatibleFake {
  origin: string;
  requests: FakeRequest[];
  /** The gateway environment for every vendor of `vendors`, their paths made URLs on this fake. */
  env(vendors: FakeVendor[]): Record<string, string>;
  close(): Promise<void>;
}

/** Starts the fake on a loopback port. */
export async function startCompatibleFake(vendors: FakeVendor[]): Promise<CompatibleFake> {
  const requests: FakeRequest[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      let body: Record<string, unknown> = {};
      try { body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>; } catch { /* recorded as {} */ }
      requests.push({ path, headers: req.headers, body });
      const vendor = vendors.find((v) => v.path === path);
      if (!vendor || req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
        return;
      }
      // Mistral refuses any parameter it does not know, stream_options among them (422 extra_forbidden).
      if (vendor.usage === 'always' && 'stream_options' in body) {
        res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'stream_options'] }] }, type: 'invalid_request_error' }));
        return;
      }
      if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(streamAnswer(vendor, body));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jsonAnswer(vendor, body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin, requests,
    env: (list) => Object.fromEntries(list.flatMap((v) => Object.entries(v.env)).map(([k, value]) => [k, value.startsWith('/') ? origin + value : value])),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
