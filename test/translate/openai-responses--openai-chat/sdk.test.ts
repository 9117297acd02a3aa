/**
 * The official `openai` SDK reads what this translator writes: a loopback server answers
 * `POST /v1/responses` with the translator's output for each golden fixture, and the SDK's own
 * stream accumulator (`client.responses.stream(...).finalResponse()`), event iterator
 * (`responses.create({stream: true})`) and JSON path (`responses.create`) consume it.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../../src/config/types.js';
import { projectRoot } from '../../../src/paths.js';
import { createOpenaiResponsesToOpenaiChat } from '../../../src/translate/openai-responses--openai-chat/index.js';
import { SseParser } from '../../../src/translate/sse.js';

type Json = Record<string, unknown>;
const here = join(projectRoot(), 'test/translate/openai-responses--openai-chat');
const offering = { id: 'gpt-4o-mini', upstreamModel: 'gpt-4o-mini' } as CompiledOffering;
const read = (name: string, file: string): string => readFileSync(join(here, name, file), 'utf8');
const cases = readdirSync(here, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

/** The answer the loopback server gives next. */
let next: { type: string; body: string } = { type: 'application/json', body: '{}' };
let received: Json | null = null;
let server: Server;
let client: OpenAI;

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => { text += c.toString(); });
    req.on('end', () => {
      received = JSON.parse(text) as Json;
      res.writeHead(req.method === 'POST' && req.url === '/v1/responses' ? 200 : 404, { 'content-type': next.type });
      res.end(next.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
});
afterAll(async () => { await new Promise((ok) => server.close(ok)); });

/** The translator's client stream for a fixture, and its parsed events. */
function translatedStream(name: string, clientBody: Json): { sse: string; events: Json[] } {
  const stream = createOpenaiResponsesToOpenaiChat(clientBody, { params: {} }).stream('gpt-4o-mini');
  let sse = '';
  for (const event of new SseParser().push(read(name, 'upstream-stream.sse'))) sse += stream.push(event).frames.join('');
  return { sse, events: new SseParser().push(sse).map((e) => JSON.parse(e.data) as Json) };
}

/** The request the SDK sends for a fixture's client request. */
function params(clientBody: Json): Json {
  const { stream: _stream, ...rest } = clientBody;
  return rest;
}

describe('the official SDK accepts the stream', () => {
  for (const name of cases.filter((c) => existsSync(join(here, c, 'upstream-stream.sse')))) {
    it(`${name}: responses.stream().finalResponse()`, async () => {
      const clientBody = JSON.parse(read(name, 'client-request.json')) as Json;
      const { sse, events } = translatedStream(name, clientBody);
      const last = events[events.length - 1]!;
      expect(['response.completed', 'response.incomplete']).toContain(last.type);
      next = { type: 'text/event-stream', body: sse };

      const runner = client.responses.stream(params(clientBody) as unknown as Parameters<typeof client.responses.stream>[0]);
      const seen: string[] = [];
      const snapshots: string[] = [];
      runner.on('event', (event) => seen.push(event.type));
      runner.on('response.output_text.delta', (event) => snapshots.push(event.snapshot));
      const final = await runner.finalResponse();

      expect(received).toMatchObject({ stream: true });
      expect(seen).toEqual(events.map((e) => e.type));
      const expected = last.response as Json;
      expect(final).toMatchObject(expected);
      const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta as string);
      expect(final.output_text).toBe(text.join(''));
      expect(snapshots).toEqual(text.map((_, i) => text.slice(0, i + 1).join('')));
    });

    it(`${name}: responses.create({stream: true}) yields every event in order`, async () => {
      const clientBody = JSON.parse(read(name, 'client-request.json')) as Json;
      const { sse, events } = translatedStream(name, clientBody);
      next = { type: 'text/event-stream', body: sse };
      const stream = await client.responses.create({ ...(params(clientBody) as object), stream: true } as OpenAI.Responses.ResponseCreateParamsStreaming);
      const got: unknown[] = [];
      for await (const event of stream) got.push(event);
      expect(got).toEqual(events);
    });
  }
});

describe('the official SDK accepts JSON answers', () => {
  for (const name of cases.filter((c) => existsSync(join(here, c, 'upstream-response.json')))) {
    it(`${name}: responses.create()`, async () => {
      const clientBody = JSON.parse(read(name, 'client-request.json')) as Json;
      const translator = createOpenaiResponsesToOpenaiChat(clientBody, { params: {} });
      translator.request(structuredClone(clientBody), offering);
      const { body } = translator.response(JSON.parse(read(name, 'upstream-response.json')) as Json, 'gpt-4o-mini');
      next = { type: 'application/json', body: JSON.stringify(body) };
      const response = await client.responses.create(clientBody as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      expect(response).toMatchObject(body);
      const texts = (body.output as Json[]).filter((o) => o.type === 'message').flatMap((o) => (o.content as Json[]).filter((p) => p.type === 'output_text').map((p) => p.text));
      expect(response.output_text).toBe(texts.join(''));
    });
  }

  it('parses strict function-call arguments (responses.parse)', async () => {
    const name = 'json-function-call-round-trip';
    const clientBody = JSON.parse(read(name, 'client-request.json')) as Json;
    const { body } = createOpenaiResponsesToOpenaiChat(clientBody, { params: {} }).response(JSON.parse(read(name, 'upstream-response.json')) as Json, 'gpt-4o-mini');
    next = { type: 'application/json', body: JSON.stringify(body) };
    const parsed = await client.responses.parse(clientBody as unknown as Parameters<typeof client.responses.parse>[0]);
    const call = parsed.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', call_id: 'call_w2', parsed_arguments: { city: 'Rome' } });
  });
});
