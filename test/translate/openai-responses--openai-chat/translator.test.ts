/**
 * openai-responses--openai-chat beyond the golden fixtures: refused tools and parameters, request
 * details, and stream shapes the fixtures do not cover (refusals, custom tool calls, errors, text after
 * a tool call, streams without usage). Lives in the pair folder; the golden runner reads only folders.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { createOpenaiResponsesToOpenaiChat } from '../../../src/translate/openai-responses--openai-chat/index.js';
import type { SseEvent } from '../../../src/translate/sse.js';
import { SseParser } from '../../../src/translate/sse.js';
import type { StreamTranslator } from '../../../src/translate/types.js';

type Json = Record<string, unknown>;
const offering = { id: 'gpt-4o-mini', upstreamModel: 'gpt-4o-mini' } as CompiledOffering;
const base = { model: 'gpt-4o-mini', input: 'hi' };

function translate(body: Json): Json {
  return createOpenaiResponsesToOpenaiChat(body, { params: {} }).request(body, offering) as Json;
}

function caught(fn: () => unknown): GatewayError {
  try { fn(); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

function refusal(body: Json): { code: string; status: number; param: string | null | undefined } {
  const error = caught(() => translate(body));
  return { code: error.code, status: error.status, param: error.extra.param };
}

const chunk = (delta: Json, finish: string | null = null): SseEvent => ({
  data: JSON.stringify({ id: 'chatcmpl-X', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }),
});
const usageChunk: SseEvent = { data: JSON.stringify({ id: 'chatcmpl-X', choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } }) };
const DONE: SseEvent = { data: '[DONE]' };

/** All client events of a stream, parsed. */
function run(stream: StreamTranslator, events: SseEvent[]): Json[] {
  const out: Json[] = [];
  for (const event of events) {
    const step = stream.push(event);
    for (const frame of step.frames) {
      for (const e of new SseParser().push(frame)) {
        const data = JSON.parse(e.data) as Json;
        expect(e.event).toBe(data.type);
        out.push(data);
      }
    }
  }
  return out;
}

describe('built-in tools', () => {
  it.each(['web_search', 'web_search_preview', 'computer_use_preview', 'mcp', 'local_shell', 'shell', 'apply_patch', 'tool_search'])(
    '%s -> unsupported_responses_tools (400)', (type) => {
      expect(refusal({ ...base, tools: [{ type: 'function', name: 'f', parameters: {} }, { type }] })).toEqual({ code: 'unsupported_responses_tools', status: 400, param: 'tools' });
    });

  it.each(['code_interpreter', 'image_generation', 'file_search'])('%s -> tool_not_available (400), checked before other built-ins', (type) => {
    expect(refusal({ ...base, tools: [{ type: 'web_search' }, { type, container: { type: 'auto' } }] })).toEqual({ code: 'tool_not_available', status: 400, param: 'tools' });
  });

  it('refuses built-ins named by tool_choice', () => {
    expect(refusal({ ...base, tool_choice: { type: 'web_search_preview' } })).toMatchObject({ code: 'unsupported_responses_tools', param: 'tool_choice' });
    expect(refusal({ ...base, tool_choice: { type: 'file_search' } })).toMatchObject({ code: 'tool_not_available', param: 'tool_choice' });
    const allowed = { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }, { type: 'image_generation' }] };
    expect(refusal({ ...base, tool_choice: allowed })).toMatchObject({ code: 'tool_not_available', param: 'tool_choice' });
  });
});

describe('refused parameters', () => {
  it.each([
    ['conversation', 'conv_1'], ['background', true],
    ['prompt', { id: 'pmpt_1' }], ['reasoning', { effort: 'low' }], ['include', ['reasoning.encrypted_content']],
    ['truncation', 'auto'], ['top_logprobs', 3], ['context_management', [{ type: 'compaction' }]], ['no_such_parameter', 1],
  ])('%s -> unsupported_parameter', (param, value) => {
    expect(refusal({ ...base, [param]: value })).toEqual({ code: 'unsupported_parameter', status: 400, param });
  });

  it('accepts the values that ask for nothing the gateway does not do', () => {
    const body = {
      ...base, store: false, background: false, truncation: 'disabled', reasoning: { effort: null, summary: null }, include: [],
      previous_response_id: null, conversation: null, metadata: { a: '1' }, max_tool_calls: 3, stream_options: { include_obfuscation: false },
    };
    expect(translate(body)).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  });

  // Issue 31 item 3: the gateway's response store keeps the answer and has already put the previous
  // turns into `input` (src/pipeline/response-store.ts); neither parameter reaches chat completions.
  it('takes store and previous_response_id, sends neither upstream and echoes both', () => {
    expect(translate({ ...base, store: true, previous_response_id: 'resp_1' })).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const translator = createOpenaiResponsesToOpenaiChat({ ...base, previous_response_id: 'resp_1' }, { params: {}, requestId: 'req_0123abcd' });
    const answer = translator.response({ id: 'chatcmpl-1', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }, 'gpt-4o-mini');
    expect(answer.body).toMatchObject({ id: 'resp_0123abcd', store: true, previous_response_id: 'resp_1', output: [{ id: 'msg_0123abcd' }] });
  });

  it.each([
    [{ role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_file', file_id: 'file-1' }] }, 'input[0].content[1]'],
    [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }, 'input[0].content[0].file_id'],
    [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'original' }] }, 'input[0].content[0].detail'],
    [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' }] }, 'input[0].content[0]'],
    [{ type: 'reasoning', id: 'rs_1', summary: [] }, 'input[0]'],
    [{ type: 'item_reference', id: 'msg_1' }, 'input[0]'],
    [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }, 'input[0]'],
    [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', namespace: 'ns' }, 'input[0].namespace'],
    [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://x/y.png' }] }, 'input[0].output[0]'],
    [{ role: 'tool', content: 'x' }, 'input[0].role'],
  ])('input item %j -> unsupported_parameter at %s', (item, param) => {
    expect(refusal({ ...base, input: [item] })).toEqual({ code: 'unsupported_parameter', status: 400, param });
  });

  it('refuses tool options with no chat equivalent, accepts their defaults', () => {
    const fn = { type: 'function', name: 'f', parameters: { type: 'object' }, strict: true };
    expect(refusal({ ...base, tools: [{ ...fn, defer_loading: true }] })).toMatchObject({ code: 'unsupported_parameter', param: 'tools[0].defer_loading' });
    expect(refusal({ ...base, tools: [{ ...fn, allowed_callers: ['programmatic'] }] })).toMatchObject({ param: 'tools[0].allowed_callers' });
    const upstream = translate({ ...base, tools: [{ ...fn, defer_loading: false, allowed_callers: ['direct'] }] });
    expect(upstream.tools).toEqual([{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }]);
  });

  it('needs input or instructions', () => {
    expect(caught(() => translate({ model: 'gpt-4o-mini' })).code).toBe('invalid_request');
    expect(translate({ model: 'gpt-4o-mini', instructions: 'Be terse.' }).messages).toEqual([{ role: 'system', content: 'Be terse.' }]);
  });
});

describe('request details', () => {
  it('sends tool_choice and parallel_tool_calls only with tools, except a forced tool', () => {
    expect(translate({ ...base, tool_choice: 'auto', parallel_tool_calls: false })).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(translate({ ...base, tool_choice: 'required' }).tool_choice).toBe('required');
  });

  it('translates allowed_tools, json_object and verbosity', () => {
    const tools = [{ type: 'function', name: 'f', parameters: null, strict: null }, { type: 'custom', name: 'c' }];
    const upstream = translate({
      ...base, tools, text: { format: { type: 'json_object' }, verbosity: 'low' },
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'f' }, { type: 'custom', name: 'c' }] },
    });
    expect(upstream).toMatchObject({
      tools: [{ type: 'function', function: { name: 'f' } }, { type: 'custom', custom: { name: 'c' } }],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }, { type: 'custom', custom: { name: 'c' } }] } },
      response_format: { type: 'json_object' }, verbosity: 'low',
    });
  });

  it('puts replayed tool calls on the assistant message before them', () => {
    const input = [
      { role: 'user', content: 'q' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }, { type: 'refusal', refusal: 'no' }] },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'custom_tool_call', call_id: 'c2', name: 'g', input: 'x' },
      { type: 'function_call_output', call_id: 'c1', output: 'r1' },
      { type: 'custom_tool_call_output', call_id: 'c2', output: 'r2' },
      { type: 'function_call', call_id: 'c3', name: 'f', arguments: '{"a":1}' },
    ];
    expect(translate({ ...base, input }).messages).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, { type: 'refusal', refusal: 'no' }],
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'c2', type: 'custom', custom: { name: 'g', input: 'x' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r1' },
      { role: 'tool', tool_call_id: 'c2', content: 'r2' },
      { role: 'assistant', tool_calls: [{ id: 'c3', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    ]);
  });
});

describe('JSON answers', () => {
  const answer = (message: Json, finish = 'stop'): Json => ({ id: 'chatcmpl-J', created: 1, choices: [{ index: 0, message, finish_reason: finish }] });

  it('turns a refusal into a refusal part; no usage reported means none', () => {
    const result = createOpenaiResponsesToOpenaiChat(base, { params: {} }).response(answer({ role: 'assistant', content: null, refusal: 'I cannot.' }), 'gpt-4o-mini');
    expect(result.body.output).toEqual([{ id: 'msg_J', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] }]);
    expect(result.body).not.toHaveProperty('usage');
    expect(result.usage).toBeNull();
    expect(result.outputText).toBe('I cannot.');
  });

  it('marks the tool call cut by the output limit incomplete, and reports content_filter', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } };
    const cut = createOpenaiResponsesToOpenaiChat(base, { params: {} }).response(answer({ role: 'assistant', content: 'x', tool_calls: [call] }, 'length'), 'gpt-4o-mini');
    expect((cut.body.output as Json[]).map((o) => o.status)).toEqual(['completed', 'incomplete']);
    const filtered = createOpenaiResponsesToOpenaiChat(base, { params: {} }).response(answer({ role: 'assistant', content: '' }, 'content_filter'), 'gpt-4o-mini');
    expect(filtered.body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] });
  });
});

describe('streams', () => {
  const stream = (): StreamTranslator => createOpenaiResponsesToOpenaiChat({ ...base, stream: true }, { params: {} }).stream('gpt-4o-mini');

  it('numbers events from 0 and streams refusals as refusal parts', () => {
    const events = run(stream(), [chunk({ role: 'assistant', refusal: '' }), chunk({ refusal: 'I ' }), chunk({ refusal: 'cannot.' }), chunk({}, 'stop'), usageChunk, DONE]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.refusal.delta', 'response.refusal.delta', 'response.refusal.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed',
    ]);
    expect(events[6]).toMatchObject({ refusal: 'I cannot.', item_id: 'msg_X', output_index: 0, content_index: 0 });
    expect((events[9]!.response as Json).output).toEqual([{ id: 'msg_X', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] }]);
  });

  it('streams custom tool calls, and text after a tool call as a new message item', () => {
    const s = stream();
    const events = run(s, [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_c', type: 'custom', custom: { name: 'sql', input: '' } }] }),
      chunk({ tool_calls: [{ index: 0, custom: { input: 'SELECT ' } }] }),
      chunk({ tool_calls: [{ index: 0, custom: { input: '1' } }] }),
      chunk({ content: 'Done.' }),
      chunk({}, 'stop'), usageChunk, DONE,
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added',
      'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done',
      'response.content_part.done', 'response.output_item.done', 'response.completed',
    ]);
    expect(events[5]).toMatchObject({ item_id: 'ctc_X_0', output_index: 0, input: 'SELECT 1' });
    expect((events[13]!.response as Json).output).toEqual([
      { id: 'ctc_X_0', type: 'custom_tool_call', call_id: 'call_c', name: 'sql', input: 'SELECT 1' },
      { id: 'msg_X', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [], logprobs: [] }] },
    ]);
    expect(s.deliveredText()).toBe('sqlSELECT 1Done.');
    expect(s.usage()).toEqual({ input: 5, output: 4, cachedInput: 0, cacheWrite: 0, reasoning: 0 });
  });

  it('closes open items at [DONE] without a finish reason, and reports no usage when none came', () => {
    const s = stream();
    const events = run(s, [chunk({ content: 'Hi' }), DONE]);
    expect(events.map((e) => e.type).slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(events[events.length - 1]!.response).not.toHaveProperty('usage');
    expect(s.usage()).toBeNull();
    expect(s.deliveredText()).toBe('Hi');
  });

  it('turns upstream error events and malformed events into upstream_error', () => {
    const s = stream();
    const step = s.push({ data: JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }) });
    expect(step.frames).toEqual([]);
    expect(step.error).toMatchObject({ code: 'upstream_error', message: 'overloaded', status: 502 });
    expect(stream().push({ data: '{not json' }).error?.code).toBe('upstream_error');
  });
});
