/**
 * Contract, continued (how Prism is used: prism-gateway.test.ts): the responses and messages formats
 * through `prism proxy --errors` over src/generated/openapi.json, with zero violations per call.
 * POST /v1/responses on gpt-4o (responses passthrough) and gpt-4o-mini (chat-only, translated);
 * POST /v1/messages and /v1/messages/count_tokens (anthropic-version header, messages error shape).
 *
 * Prism sees `type: string` for text/event-stream, so a stream is checked here, event by event: the
 * `event:` name equals the data's `type`, every data validates against the format's event component
 * (ResponseStreamEvent, MessageStreamEvent), and the objects the stream carries (the response of
 * response.created/completed, the message of message_start) validate against Response / Message.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callJson as call, componentValidator, expectClean, sseEvents, startPrismProxy as startPrism, stopChild, type Answer } from '../helpers/prism.js';

const SPEC = resolve('src/generated/openapi.json');
const doc = JSON.parse(readFileSync(SPEC, 'utf8')) as { components: { schemas: Record<string, any> } };
const valid = (name: string) => componentValidator(doc.components, name);

const VERSION = { 'anthropic-version': '2023-06-01' };
const weather = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const responsesTools = [{ type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters: weather }];
const messagesTools = [{ name: 'get_weather', description: 'Current weather of a city', input_schema: weather }];
const responses = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o', input: 'Say hello', ...extra });
const message = (extra: Record<string, unknown> = {}) => ({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Say hello' }], ...extra });

/** The events of a clean SSE answer, parsed; each `event:` name must equal its data's `type`. */
function streamOf(res: Answer, component: string): any[] {
  expectClean(res, 200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const validEvent = valid(component);
  const events = sseEvents(res.text).map(({ event, data }) => {
    const parsed = JSON.parse(data);
    expect(event, data).toBe(parsed.type);
    expect(validEvent(parsed), `${data}\n${validEvent.errorsText()}`).toBe(true);
    return parsed;
  });
  expect(events.length).toBeGreaterThan(2);
  return events;
}

function expectValid(name: string, value: unknown): void {
  const validate = valid(name);
  expect(validate(value), `${JSON.stringify(value)}\n${validate.errorsText()}`).toBe(true);
}

describe.runIf(storeKind === 'pglite')('Prism contract: the responses and messages formats', () => {
  let t: TestGateway;
  let prism: Awaited<ReturnType<typeof startPrism>>;
  let strictPrism: Awaited<ReturnType<typeof startPrism>>;
  let strictDoc: typeof doc;
  let tmp: string;
  let key: string;
  let broke: string;

  beforeAll(async () => {
    t = await startTestGateway();
    key = (await t.account('5')).key;
    broke = (await t.account('0')).key;
    // A copy of the document no real response, message or messages error can satisfy (negative controls).
    tmp = mkdtempSync(join(tmpdir(), 'gw-prism-formats-'));
    strictDoc = structuredClone(doc);
    const s = strictDoc.components.schemas;
    for (const name of ['Response', 'Message', 'ResponseStreamEvent', 'MessageStreamEvent']) s[name].required.push('no_such_field');
    s.MessagesErrorResponse.properties.error.required.push('no_such_field');
    writeFileSync(join(tmp, 'strict.json'), JSON.stringify(strictDoc));
    [prism, strictPrism] = await Promise.all([startPrism(SPEC, t.url), startPrism(join(tmp, 'strict.json'), t.url)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stopChild(prism?.child), stopChild(strictPrism?.child)]);
    await t?.dispose();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  // gpt-4o is forwarded natively, gpt-4o-mini is answered by chat and translated back: same contract.
  it.each(['gpt-4o', 'gpt-4o-mini'])('responses JSON on %s, plain and with a function tool, pass without violations', async (model) => {
    const plain = await call(prism.url, '/v1/responses', { key, body: responses({ model }) });
    expectClean(plain, 200);
    expect(plain.json).toMatchObject({ object: 'response', model, status: 'completed', usage: { total_tokens: expect.any(Number) } });
    expect(plain.json.output).toEqual([expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: expect.stringMatching(/\S/) })] })]);

    const tool = await call(prism.url, '/v1/responses', { key, body: responses({ model, input: 'What is the weather in Paris?', tools: responsesTools, tool_choice: 'auto' }) });
    expectClean(tool, 200);
    const calls = tool.json.output.filter((item: { type: string }) => item.type === 'function_call');
    expect(calls).toEqual([expect.objectContaining({ name: 'get_weather', call_id: expect.stringMatching(/\S/), arguments: expect.any(String) })]);
    expect(JSON.parse(calls[0].arguments)).toEqual({ city: expect.any(String) });
  });

  it.each(['gpt-4o', 'gpt-4o-mini'])('a streamed response on %s passes, and every SSE event is a valid ResponseStreamEvent', async (model) => {
    const res = await call(prism.url, '/v1/responses', { key, body: responses({ model, stream: true }) });
    const events = streamOf(res, 'ResponseStreamEvent');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0].type).toBe('response.created');
    expect(events.at(-1).type).toBe('response.completed');
    for (const e of events.filter((x) => x.response)) expectValid('Response', e.response);
    const done = events.at(-1).response;
    expect(done).toMatchObject({ model, status: 'completed', usage: { output_tokens: expect.any(Number) } });
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    expect(text).toMatch(/\S/);
    expect(done.output[0].content[0].text).toBe(text);
  });

  it('messages JSON with a tool on claude-sonnet-4-5 passes without violations (x-api-key auth)', async () => {
    const res = await call(prism.url, '/v1/messages', { apiKey: key, headers: VERSION, body: message({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: messagesTools }) });
    expectClean(res, 200);
    expect(res.json).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
    expect(res.json.content).toContainEqual(expect.objectContaining({ type: 'tool_use', id: expect.stringMatching(/\S/), name: 'get_weather', input: { city: expect.any(String) } }));
  });

  it('a streamed message passes, and every SSE event is a valid MessageStreamEvent', async () => {
    const res = await call(prism.url, '/v1/messages', { apiKey: key, headers: VERSION, body: message({ stream: true }) });
    const events = streamOf(res, 'MessageStreamEvent');
    expect(events[0].type).toBe('message_start');
    expectValid('Message', events[0].message);
    expect(events.at(-1).type).toBe('message_stop');
    const delta = events.find((e) => e.type === 'message_delta');
    expect(delta).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: expect.any(Number) } });
    const text = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta').map((e) => e.delta.text).join('');
    expect(text).toMatch(/\S/);
  });

  // Free: it answers even on a zero balance.
  it('count_tokens passes without violations, on a zero balance too', async () => {
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Say hello' }], tools: messagesTools };
    for (const k of [key, broke]) {
      const res = await call(prism.url, '/v1/messages/count_tokens', { apiKey: k, headers: VERSION, body });
      expectClean(res, 200);
      expect(res.json).toEqual({ input_tokens: expect.any(Number) });
      expect(res.json.input_tokens).toBeGreaterThan(0);
    }
  });

  // Error answers use the declared statuses and the route format's error shape.
  it('401, 400 (missing anthropic-version) and 402 on /v1/messages are documented messages errors', async () => {
    const unauthorized = await call(prism.url, '/v1/messages', { apiKey: 'gw-not-a-real-key', headers: VERSION, body: message() });
    expectClean(unauthorized, 401);
    expect(unauthorized.json).toEqual({ type: 'error', error: expect.objectContaining({ type: 'authentication_error', code: 'invalid_api_key', message: expect.any(String) }) });
    const noVersion = await call(prism.url, '/v1/messages', { apiKey: key, body: message() });
    expectClean(noVersion, 400);
    expect(noVersion.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('anthropic-version') } });
    const payment = await call(prism.url, '/v1/messages', { apiKey: broke, headers: VERSION, body: message() });
    expectClean(payment, 402);
    expect(payment.json).toMatchObject({ type: 'error', error: { type: 'billing_error', code: 'insufficient_balance', message: expect.any(String) } });
    for (const res of [unauthorized, noVersion, payment]) expectValid('MessagesErrorResponse', res.json);
  });

  it('400 model_not_found on /v1/responses is a documented error', async () => {
    const res = await call(prism.url, '/v1/responses', { key, body: responses({ model: 'no-such-model' }) });
    expectClean(res, 400);
    expect(res.json.error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error', message: expect.any(String) });
  });

  // Negative controls: the same checks do fail when the request or the response breaks the contract.
  it('reports a messages request violation (max_tokens missing) without forwarding it', async () => {
    const res = await call(prism.url, '/v1/messages', { apiKey: key, headers: VERSION, body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('problem+json');
    expect(res.headers.get('x-request-id')).toBeNull();
    expect(res.json.validation).toEqual(expect.arrayContaining([expect.objectContaining({ location: ['body'], code: 'required', message: expect.stringContaining('max_tokens') })]));
  });

  const expectViolation = (res: Answer) => {
    expect(res.status).toBe(500);
    expect(res.json.type).toMatch(/errors#VIOLATIONS$/);
    expect(res.headers.get('sl-violations')).toContain('no_such_field');
    expect(JSON.stringify(res.json.validation)).toContain('no_such_field');
  };

  it('reports a response violation of a responses answer against a document it does not satisfy', async () => {
    expectViolation(await call(strictPrism.url, '/v1/responses', { key, body: responses() }));
    expectViolation(await call(strictPrism.url, '/v1/responses', { key, body: responses({ model: 'gpt-4o-mini' }) }));
    // Prism does not look into an event stream: only the per-event check here can catch a bad event.
    const stream = await call(strictPrism.url, '/v1/responses', { key, body: responses({ stream: true }) });
    expectClean(stream, 200);
    const strictEvent = componentValidator(strictDoc.components, 'ResponseStreamEvent');
    expect(strictEvent(JSON.parse(sseEvents(stream.text)[0]!.data))).toBe(false);
    expect(strictEvent.errorsText()).toContain('no_such_field');
  });

  it('reports a response violation of a messages answer, and of a messages error, against a stricter document', async () => {
    expectViolation(await call(strictPrism.url, '/v1/messages', { apiKey: key, headers: VERSION, body: message() }));
    expectViolation(await call(strictPrism.url, '/v1/messages', { apiKey: 'gw-not-a-real-key', headers: VERSION, body: message() }));
    const stream = await call(strictPrism.url, '/v1/messages', { apiKey: key, headers: VERSION, body: message({ stream: true }) });
    expectClean(stream, 200);
    const strictEvent = componentValidator(strictDoc.components, 'MessageStreamEvent');
    expect(strictEvent(JSON.parse(sseEvents(stream.text)[0]!.data))).toBe(false);
    expect(strictEvent.errorsText()).toContain('no_such_field');
  });
});
