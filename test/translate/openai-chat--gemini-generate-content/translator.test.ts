/**
 * openai-chat--gemini-generate-content beyond the golden fixtures: refusals (which the fixture runner
 * has no slot for), tool results naming their call, error answers and events, blocked prompts, and
 * cumulative stream usage.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { createOpenaiChatToGeminiGenerateContent } from '../../../src/translate/openai-chat--gemini-generate-content/index.js';

const offering = { id: 'google-ai-gemini-2.5-flash', upstreamModel: 'gemini-2.5-flash', structuredOutput: true } as CompiledOffering;
const plain = { id: 'plain', upstreamModel: 'plain' } as CompiledOffering;
const base = { model: 'google-ai-gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] };

function translate(body: Record<string, unknown>, on: CompiledOffering = offering): Record<string, any> {
  return createOpenaiChatToGeminiGenerateContent(body, { params: {}, offering: on }).request(body, on) as Record<string, any>;
}

function caught(fn: () => unknown): GatewayError {
  try { fn(); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

describe('parameters', () => {
  it.each([
    ['n', { n: 2 }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['logit_bias', { logit_bias: { '1': 5 } }],
    ['parallel_tool_calls', { parallel_tool_calls: false }],
    ['reasoning_effort', { reasoning_effort: 'extreme' }],
    ['user', { user: 'u-1' }],
    ['audio', { audio: { voice: 'alloy' } }],
  ])('refuses %s with unsupported_parameter, before anything is sent', (param, extra) => {
    const error = caught(() => createOpenaiChatToGeminiGenerateContent({ ...base, ...extra }, { params: {}, offering }));
    expect(error.code).toBe('unsupported_parameter');
    expect(error.extra.param).toBe(param);
  });

  it('accepts the values that ask for nothing (n 1, no log probabilities, no penalties)', () => {
    expect(translate({ ...base, n: 1, logprobs: false, presence_penalty: 0, frequency_penalty: 0, modalities: ['text'], store: false })).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it('carries penalties and json_object as generationConfig', () => {
    expect(translate({ ...base, presence_penalty: 0.5, frequency_penalty: -0.5, response_format: { type: 'json_object' } }).generationConfig)
      .toEqual({ presencePenalty: 0.5, frequencyPenalty: -0.5, responseMimeType: 'application/json' });
  });

  it('carries reasoning_effort as a thinking budget (Google\'s mapping)', () => {
    expect(translate({ ...base, reasoning_effort: 'low' }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024 } });
    expect(translate({ ...base, reasoning_effort: 'high' }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 24576 } });
  });

  it('refuses structured output on an offering that does not take it', () => {
    const error = caught(() => translate({ ...base, response_format: { type: 'json_object' } }, plain));
    expect(error.extra.param).toBe('response_format');
  });

  it('refuses images by URL and unknown content parts, naming them', () => {
    const url = caught(() => translate({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }));
    expect(url.extra.param).toBe('messages[0].content[0].image_url');
    const audio = translate({ ...base, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] });
    expect(audio.contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } });
  });

  it('names a tool result after its call; a result answering no call is a 400', () => {
    const error = caught(() => translate({ ...base, messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_x', content: 'out' }] }));
    expect(error.code).toBe('invalid_request');
    expect(error.extra.param).toBe('messages[1].tool_call_id');
  });

  it('tool_choice: none without tools asks for nothing, a forced tool without tools is a 400', () => {
    expect(translate({ ...base, tool_choice: 'none' }).toolConfig).toBeUndefined();
    expect(caught(() => translate({ ...base, tool_choice: 'required' })).extra.param).toBe('tool_choice');
  });
});

describe('answers', () => {
  const translator = () => createOpenaiChatToGeminiGenerateContent({ ...base, stream: true, stream_options: { include_usage: true } }, { params: {}, offering });

  it('a blocked prompt is a content_filter finish with the prompt billed', () => {
    const answer = translator().response({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, responseId: 'r1' }, 'm');
    expect((answer.body.choices as any[])[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: '' } });
    expect(answer.usage).toEqual({ input: 9, output: 0, cachedInput: 0, cacheWrite: 0, reasoning: 0 });
  });

  it('maps error answers: a prompt over the limit is context_length_exceeded, a 429 keeps its retry-after', () => {
    const t = translator();
    expect(t.error(400, { error: { code: 400, message: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } }, {}).code).toBe('context_length_exceeded');
    const limited = t.error(429, { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }, { 'retry-after': '7' });
    expect(limited.code).toBe('upstream_rate_limited');
    expect(t.error(400, { error: { code: 400, message: 'Bad schema', status: 'INVALID_ARGUMENT' } }, {})).toMatchObject({ code: 'invalid_request', message: 'Bad schema' });
  });

  it('streams: usage is the latest chunk\'s (never a sum); an error chunk ends the stream; nothing after the finish', () => {
    const stream = translator().stream('m');
    const chunk = (text: string, usage: Record<string, number>, finish?: string) => ({ data: JSON.stringify({ candidates: [{ content: { parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }], usageMetadata: usage, responseId: 'r2' }) });
    stream.push(chunk('a', { promptTokenCount: 5, candidatesTokenCount: 1 }));
    expect(stream.usage()).toMatchObject({ input: 5, output: 1 });
    const last = stream.push(chunk('b', { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 3 }, 'MAX_TOKENS'));
    expect(last.done).toBe(true);
    expect(last.frames.some((f) => f.includes('"finish_reason":"length"'))).toBe(true);
    expect(stream.usage()).toEqual({ input: 5, output: 5, cachedInput: 0, cacheWrite: 0, reasoning: 3 });
    expect(stream.push(chunk('c', { promptTokenCount: 5 })).frames).toEqual([]);
    expect(stream.deliveredText()).toBe('ab');

    const broken = translator().stream('m');
    const step = broken.push({ data: JSON.stringify({ error: { code: 500, message: 'Internal error', status: 'INTERNAL' } }) });
    expect(step.error?.code).toBe('upstream_error');
    expect(translator().stream('m').push({ data: '{"candidates": [oops' }).error?.code).toBe('upstream_error');
  });
});
