/**
 * Contract: the gateway's real upstream adapters against the vendors' published specs. Two Prism mocks
 * (`prism mock SPEC -d false -v debug`) play OpenAI and Anthropic, built from the vendor documents in
 * `shared/specs` beside the repository (`<repo>/../shared/specs`; see its README for the Prism pitfalls);
 * the gateway runs in-process with real-looking keys, so no simulator starts and every upstream request
 * goes to a mock.
 *
 * Prism validates each request against the vendor's schema before answering: an invalid one gets a 422
 * (which the gateway would pass on as a 4xx) and `Request did not pass the validation rules` plus one
 * VALIDATOR line per violation in its log. So for every call this file asserts (1) the client got 200
 * and (2) the one request the mock logged passed validation with no violation, reaching the expected
 * vendor path; at debug level Prism also logs the body it validated, which shows the feature under test
 * (tools, stop sequences, cache_control...) really reached the vendor.
 *
 * Not covered here: streaming (Prism cannot mock SSE: the simulator tests do), billing (the mocks'
 * static examples carry placeholder usage; metering may settle on estimates).
 *
 * Path layout: the OpenAI document's server is https://api.openai.com/v1 and its paths are `/chat/completions`,
 * `/responses`; Prism mock serves the paths at its root (POST /v1/chat/completions is a 404 there), so
 * OPENAI_BASE_URL is the mock's bare URL. The Anthropic document's paths carry /v1 (`/v1/messages`), like
 * the gateway's operation paths, so ANTHROPIC_BASE_URL is the mock's bare URL too.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  compilePrismRequestBodies, logMark, loggedRequestsSince, parsePrismLog, startPrismMock, stopChild,
  type PrismLoggedRequest, type PrismProcess,
} from '../helpers/prism.js';

/** Found from the repository root, not a fixed absolute path: the checkout may live anywhere. */
const SPECS = resolve(projectRoot(), '../shared/specs');
const OPENAI_SPEC = resolve(SPECS, 'openai/openapi.prism.json');
const ANTHROPIC_SPEC = resolve(SPECS, 'anthropic/openapi.prism.json');
const OPENAI_KEY = 'sk-test-not-real';
const ANTHROPIC_KEY = 'sk-ant-test-not-real';

interface Answer { status: number; text: string; json: any }

const weatherParameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const chatWeatherTool = { type: 'function', function: { name: 'get_weather', description: 'Current weather of a city', parameters: weatherParameters } };
const messagesWeatherTool = { name: 'get_weather', description: 'Current weather of a city', input_schema: weatherParameters };

/**
 * The OpenAI-compatible vendors whose chat path is `<base>/chat/completions` (issue 32 item 1), each an
 * offering and its upstream model: with their base URLs on the OpenAI mock, what the gateway sends them
 * (their YAML parameter policies and usage options applied) is judged by OpenAI's CreateChatCompletionRequest.
 * Azure OpenAI's path (/openai/v1/chat/completions) is not in that document: its loopback fake checks it
 * (test/e2e/compatible-vendors.test.ts).
 */
const COMPATIBLE = [
  { env: 'MISTRAL', model: 'mistral-small-latest', upstream: 'mistral-small-latest' },
  { env: 'GROQ', model: 'llama-3.3-70b-versatile', upstream: 'llama-3.3-70b-versatile' },
  { env: 'DEEPSEEK', model: 'deepseek-chat', upstream: 'deepseek-chat' },
  { env: 'XAI', model: 'grok-3-mini', upstream: 'grok-3-mini' },
  { env: 'OPENROUTER', model: 'openrouter-llama-3.3-70b-instruct', upstream: 'meta-llama/llama-3.3-70b-instruct' },
  { env: 'GEMINI', model: 'gemini-2.5-flash', upstream: 'gemini-2.5-flash' },
  { env: 'VLLM', model: 'vllm-llama-3.1-8b-instruct', upstream: 'meta-llama/Llama-3.1-8B-Instruct' },
  { env: 'OLLAMA', model: 'ollama-llama3.2', upstream: 'llama3.2' },
] as const;

/** Each compatible vendor's key and base URL, the base URL the mock's. */
function compatibleOnMock(url: string): Record<string, string> {
  return Object.fromEntries(COMPATIBLE.flatMap((v) => [[`${v.env}_API_KEY`, 'sk-test-not-real'], [`${v.env}_BASE_URL`, url]]));
}

// The contract is store-independent (what the gateway sends upstream does not depend on the store), and
// Prism is slow to start on these documents (20+ s for OpenAI's): run it once, on the pglite project.
describe.runIf(storeKind === 'pglite')('Prism vendor contract: upstream requests validate against the vendors\' specs', () => {
  let openai: PrismProcess;
  let anthropic: PrismProcess;
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startPrismMock(OPENAI_SPEC), startPrismMock(ANTHROPIC_SPEC)]);
    t = await startTestGateway({
      env: { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: openai.url, ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: anthropic.url, ...compatibleOnMock(openai.url) },
    });
    // OpenAI and Anthropic have keys, so their requests go to the mocks (the native providers, keyless, stay on the simulator).
    const providers = t.gw.generation().gateway.providers;
    expect(['openai', 'anthropic'].map((id) => [id, providers.get(id)!.simulated, providers.get(id)!.baseUrl.replace(/\/$/, '')])).toEqual([['openai', false, openai.url], ['anthropic', false, anthropic.url]]);
    key = (await t.account('5')).key;
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await Promise.all([stopChild(openai?.child), stopChild(anthropic?.child)]);
  }, 60_000);

  async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST', body: JSON.stringify(body),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    });
    const text = await res.text();
    let json: unknown = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, text, json };
  }

  /**
   * Sends one client request through the gateway and returns the single request `vendor` logged for it,
   * after checking it reached `path`, passed Prism's validation without a single violation, and was
   * answered 2xx by the mock; then that the client got `status` (200 unless a mock example is unusable).
   */
  async function viaGateway(vendor: PrismProcess, path: string, route: string, body: unknown, opts: { headers?: Record<string, string>; status?: number } = {}): Promise<{ answer: Answer; upstream: PrismLoggedRequest }> {
    const others = [openai, anthropic].filter((p) => p !== vendor);
    const otherMarks = others.map(logMark);
    const mark = logMark(vendor);
    const answer = await post(route, body, opts.headers);
    const logged = await loggedRequestsSince(vendor, mark, 1);
    const detail = `client ${answer.status}: ${answer.text.slice(0, 2000)}\nprism:\n${logged.flatMap((r) => r.lines.filter((l) => !/debug\s+> Body/.test(l))).join('\n').slice(0, 8000)}`;
    expect(logged.map((r) => `${r.method} ${r.path}`), detail).toEqual([`POST ${path}`]);
    const upstream = logged[0]!;
    expect(upstream.violations, detail).toEqual([]);
    expect(upstream.passed, detail).toBe(true);
    expect(upstream.terminated, detail).toBeNull();
    expect(upstream.status, detail).toBeGreaterThanOrEqual(200);
    expect(upstream.status, detail).toBeLessThan(300);
    others.forEach((other, i) => expect(parsePrismLog(other.log().slice(otherMarks[i])), 'the other vendor got nothing').toEqual([]));
    expect(answer.status, detail).toBe(opts.status ?? 200);
    return { answer, upstream };
  }

  const anthropicHeaders = { 'anthropic-version': '2023-06-01' };

  // Prism validates a body only if its Ajv compiles the schema: otherwise it lets everything through
  // without a word. Compile each exercised operation's request body the way Prism 5.14 does (its loader,
  // its Ajv copies and options, the dialect it picks from the schema's $schema: draft-07 for these
  // OAS 3.1 documents, which declare no jsonSchemaDialect), and refuse 2020-12-only keywords a draft-07
  // Ajv would ignore.
  it('compiles the request body schemas of every exercised operation, as Prism would', async () => {
    const openaiOps = new Set(['POST /chat/completions', 'POST /responses', 'POST /embeddings']);
    const anthropicOps = new Set(['POST /v1/messages', 'POST /v1/messages/count_tokens']);
    const [fromOpenai, fromAnthropic] = await Promise.all([
      compilePrismRequestBodies(OPENAI_SPEC, (op) => openaiOps.has(`${op.method} ${op.path}`)),
      compilePrismRequestBodies(ANTHROPIC_SPEC, (op) => anthropicOps.has(`${op.method} ${op.path}`)),
    ]);
    const all = [...fromOpenai, ...fromAnthropic];
    const json = all.filter((b) => b.mediaType === 'application/json');
    expect(json.map((b) => `${b.method} ${b.path}`).sort()).toEqual([...openaiOps, ...anthropicOps].sort());
    expect(all.filter((b) => b.error).map((b) => `${b.method} ${b.path} ${b.mediaType}: ${b.error}`)).toEqual([]);
    expect(all.filter((b) => b.dialect === 'draft7' && b.only2020.length > 0).map((b) => `${b.path}: ${b.only2020.join(', ')}`)).toEqual([]);
  }, 120_000);

  // Negative controls: the mock does refuse an invalid body, and the log reader does see the violation.
  it('negative control: the OpenAI mock answers 422 to an invalid chat body, and the log shows it', async () => {
    const mark = logMark(openai);
    const res = await fetch(`${openai.url}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 'hot' }),
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('temperature');
    const [logged, ...rest] = await loggedRequestsSince(openai, mark, 1);
    expect(rest).toEqual([]);
    expect(logged).toMatchObject({ method: 'POST', path: '/chat/completions', passed: false });
    expect(logged!.violations).toContain('Request did not pass the validation rules');
    expect(logged!.violations).toContain('Request body property temperature must be number');
    expect(logged!.terminated).toMatch(/UNPROCESSABLE_ENTITY/);
  });

  it('negative control: the Anthropic mock flags a messages body without max_tokens', async () => {
    const mark = logMark(anthropic);
    const res = await fetch(`${anthropic.url}/v1/messages`, {
      method: 'POST', headers: { 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5-20250929', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    await res.text();
    const [logged] = await loggedRequestsSince(anthropic, mark, 1);
    expect(logged?.passed).toBe(false);
    expect(logged!.violations.join('\n')).toMatch(/max_tokens/);
  });

  // End to end: a value the gateway forwards as is but the vendor's enum refuses. The mock answers 422,
  // the client gets a 400, and viaGateway's checks fail on the logged violation. (If the gateway ever
  // validates reasoning_effort itself, nothing reaches the mock: pick another forwarded-as-is value.)
  it('negative control through the gateway: a forwarded value the vendor refuses fails the check', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'extreme' };
    const mark = logMark(openai);
    const answer = await post('/v1/chat/completions', body);
    expect(answer.status).toBe(400);
    const [logged, ...rest] = await loggedRequestsSince(openai, mark, 1);
    expect(rest).toEqual([]);
    expect(logged).toMatchObject({ path: '/chat/completions', passed: false, body: { reasoning_effort: 'extreme' } });
    expect(logged!.violations.join('\n')).toContain('Request body property reasoning_effort must be equal to one of the allowed values');
    await expect(viaGateway(openai, '/chat/completions', '/v1/chat/completions', body)).rejects.toThrow(/reasoning_effort/);
  });

  // chat completions on an openai-chat offering: forwarded as chat completions (identity translation).
  it('chat on gpt-4o-mini with tools and tool_choice: a valid CreateChatCompletionRequest', async () => {
    const { upstream, answer } = await viaGateway(openai, '/chat/completions', '/v1/chat/completions', {
      model: 'gpt-4o-mini', temperature: 0.2, max_completion_tokens: 64,
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Weather in Paris?' }],
      tools: [chatWeatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(upstream.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(answer.json).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini' });
    expect(upstream.body).toMatchObject({ model: 'gpt-4o-mini', tools: [chatWeatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  });

  it('chat on gpt-4o-mini with a tool result round trip, tool_choice auto and stop', async () => {
    const { upstream } = await viaGateway(openai, '/chat/completions', '/v1/chat/completions', {
      model: 'gpt-4o-mini', stop: ['END'], parallel_tool_calls: false, tools: [chatWeatherTool], tool_choice: 'auto',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '18 C, sunny' },
      ],
    });
    expect(upstream.body).toMatchObject({ stop: ['END'], tool_choice: 'auto', messages: [{ role: 'user' }, { role: 'assistant' }, { role: 'tool', tool_call_id: 'call_1' }] });
  });

  // embeddings on an OpenAI-format offering: forwarded as is (identity), token-id arrays included.
  it('embeddings on text-embedding-3-small (texts, dimensions, user; token ids): a valid CreateEmbeddingRequest', async () => {
    const texts = { model: 'text-embedding-3-small', input: ['hello world'], dimensions: 256, encoding_format: 'float', user: 'user-1' };
    const { upstream, answer } = await viaGateway(openai, '/embeddings', '/v1/embeddings', texts);
    expect(upstream.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(upstream.body).toEqual(texts);
    expect(answer.json).toMatchObject({ object: 'list', model: 'text-embedding-3-small', data: [{ object: 'embedding', index: 0 }] });
    const ids = { model: 'text-embedding-3-small', input: [15339, 1917] };
    expect((await viaGateway(openai, '/embeddings', '/v1/embeddings', ids)).upstream.body).toEqual(ids);
  });

  // chat completions on a messages-format offering: translated to a Messages request.
  it('chat on claude-sonnet-4-5 (system, tools, tool results, stop): a valid Messages request', async () => {
    const { upstream, answer } = await viaGateway(anthropic, '/v1/messages', '/v1/chat/completions', {
      model: 'claude-sonnet-4-5', max_tokens: 128, temperature: 0.5, stop: ['END', '###'],
      tools: [chatWeatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01', content: '18 C, sunny' },
        { role: 'user', content: 'And tomorrow?' },
      ],
    });
    expect(upstream.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(upstream.headers['anthropic-version']).toBe('2023-06-01');
    expect(answer.json).toMatchObject({ object: 'chat.completion', model: 'claude-sonnet-4-5', choices: [{ message: { role: 'assistant' } }] });
    expect(upstream.body).toMatchObject({
      model: 'claude-sonnet-4-5-20250929', max_tokens: 128, system: 'You are terse.', stop_sequences: ['END', '###'],
      tools: [{ name: 'get_weather', input_schema: weatherParameters }], tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [
        { role: 'user' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01' }, { type: 'text', text: 'And tomorrow?' }] },
      ],
    });
  });

  it('chat on claude-sonnet-4-5 with tool_choice required and parallel_tool_calls false', async () => {
    const { upstream } = await viaGateway(anthropic, '/v1/messages', '/v1/chat/completions', {
      model: 'claude-sonnet-4-5', max_completion_tokens: 64, tools: [chatWeatherTool], tool_choice: 'required', parallel_tool_calls: false,
      messages: [{ role: 'developer', content: 'Use tools.' }, { role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] }],
    });
    expect(upstream.body).toMatchObject({ tool_choice: { type: 'any', disable_parallel_tool_use: true }, system: [{ type: 'text', text: 'Use tools.' }, { type: 'text', text: 'Be brief.' }] });
  });

  // responses on a responses-passthrough offering: forwarded natively to /responses.
  it('responses on gpt-4o with a function tool and web_search: a valid CreateResponse', async () => {
    const { upstream, answer } = await viaGateway(openai, '/responses', '/v1/responses', {
      model: 'gpt-4o', instructions: 'Answer briefly.', max_output_tokens: 256, tool_choice: 'auto',
      input: [{ role: 'user', content: 'What is the weather in Paris, and any news?' }],
      tools: [{ type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters: weatherParameters, strict: true }, { type: 'web_search' }],
    });
    expect(upstream.body).toMatchObject({ model: 'gpt-4o', tools: [{ type: 'function', name: 'get_weather' }, { type: 'web_search' }] });
    expect(answer.json).toMatchObject({ object: 'response', model: 'gpt-4o' });
  });

  it('responses on gpt-4o with a function call output round trip', async () => {
    const { upstream } = await viaGateway(openai, '/responses', '/v1/responses', {
      model: 'gpt-4o', tools: [{ type: 'function', name: 'get_weather', parameters: weatherParameters, strict: true }],
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18 C, sunny' },
      ],
    });
    expect(upstream.body).toMatchObject({ input: [{ role: 'user' }, { type: 'function_call' }, { type: 'function_call_output', call_id: 'call_1' }] });
  });

  // responses on a chat-only offering: translated to a chat completions request.
  it('responses on gpt-4o-mini (instructions, function tool): a valid CreateChatCompletionRequest', async () => {
    const { upstream, answer } = await viaGateway(openai, '/chat/completions', '/v1/responses', {
      model: 'gpt-4o-mini', instructions: 'Answer briefly.', max_output_tokens: 64, tool_choice: 'auto',
      input: 'Weather in Paris?',
      tools: [{ type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters: weatherParameters, strict: true }],
    });
    expect(upstream.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [{ role: expect.stringMatching(/^(system|developer)$/) }, { role: 'user' }],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
    });
    expect(answer.json).toMatchObject({ object: 'response', model: 'gpt-4o-mini' });
  });

  it('responses on gpt-4o-mini with a function call output round trip', async () => {
    const { upstream } = await viaGateway(openai, '/chat/completions', '/v1/responses', {
      model: 'gpt-4o-mini', instructions: 'Answer briefly.',
      tools: [{ type: 'function', name: 'get_weather', parameters: weatherParameters, strict: true }],
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18 C, sunny' },
      ],
    });
    expect(upstream.body).toMatchObject({ messages: expect.arrayContaining([expect.objectContaining({ role: 'tool', tool_call_id: 'call_1' })]) });
  });

  // messages on a messages-format offering: forwarded natively.
  it('messages on claude-sonnet-4-5 with cache_control system blocks and a tool: a valid Messages request', async () => {
    const { upstream, answer } = await viaGateway(anthropic, '/v1/messages', '/v1/messages', {
      model: 'claude-sonnet-4-5', max_tokens: 128, stop_sequences: ['END'],
      system: [{ type: 'text', text: 'You are a weather bot.' }, { type: 'text', text: 'Long reference text.', cache_control: { type: 'ephemeral' } }],
      tools: [messagesWeatherTool], tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '18 C, sunny' }] },
      ],
    }, { headers: anthropicHeaders });
    expect(upstream.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(upstream.body).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      system: [{ type: 'text' }, { type: 'text', cache_control: { type: 'ephemeral' } }],
      tools: [messagesWeatherTool],
    });
    expect(answer.json).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-5' });
  });

  it('count_tokens on claude-sonnet-4-5 with system blocks and a tool: a valid count-tokens request', async () => {
    const { upstream, answer } = await viaGateway(anthropic, '/v1/messages/count_tokens', '/v1/messages/count_tokens', {
      model: 'claude-sonnet-4-5',
      system: [{ type: 'text', text: 'You are a weather bot.', cache_control: { type: 'ephemeral' } }],
      tools: [messagesWeatherTool],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    }, { headers: anthropicHeaders });
    expect(upstream.body).toMatchObject({ model: 'claude-sonnet-4-5-20250929', tools: [messagesWeatherTool] });
    expect(answer.json).toMatchObject({ input_tokens: expect.any(Number) });
  });

  for (const vendor of COMPATIBLE) {
    it(`chat on ${vendor.model} (${vendor.env.toLowerCase()}, OpenAI-compatible) with a tool: a valid CreateChatCompletionRequest`, async () => {
      const { upstream, answer } = await viaGateway(openai, '/chat/completions', '/v1/chat/completions', {
        model: vendor.model, max_tokens: 32, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [chatWeatherTool],
      });
      expect(upstream.body).toMatchObject({ model: vendor.upstream, tools: [chatWeatherTool] });
      expect(answer.json.model).toBe(vendor.model);
    });
  }
});
