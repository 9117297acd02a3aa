/**
 * The simulator's deterministic OpenAI Responses logic (`POST /v1/responses`): validation, input
 * token counting, the answer (web-search calls then a message, or one function call), and the
 * Response object. No I/O; answers are memoised by body. Stream events: responses-stream.ts.
 */
import { countTextTokens } from '../tokenize.js';
import type { SimRequestError, SimResult } from './chat.js';
import { jsonAnswer, responsesJsonFormat } from './structured.js';
import {
  answerKey, bodyHash, fitText, isRecord, Memo, outputBudget, partsText, quote, sampleObject, sizedReply, splitWords, webSearchCount, type Rec,
} from './text.js';

/** The request fields the simulator looks at (every other field of the body is echoed when known). */
export interface SimResponsesRequest {
  model: string;
  input: string | unknown[];
  instructions?: string | null;
  tools?: unknown[] | null;
  tool_choice?: unknown;
  max_output_tokens?: number | null;
  stream?: boolean | null;
  prompt_cache_key?: string | null;
  [key: string]: unknown;
}

/** `usage` of a Response exactly as the simulator reports it. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A computed answer, shared by the JSON and the stream encodings. */
export interface ResponsesAnswer {
  id: string;
  created_at: number;
  model: string;
  /** Built-in web searches, in output order before the message. */
  searches: { id: string; query: string }[];
  /** The text message; null when the answer is a function call. */
  message: { id: string; text: string; words: string[] } | null;
  call: { id: string; call_id: string; name: string; arguments: string } | null;
  /** The text was cut by max_output_tokens (status "incomplete"). */
  incomplete: boolean;
  usage: ResponsesUsage;
  /** Request fields echoed into the Response object. */
  echo: Rec;
}

/** Fixed input-token overhead of every Responses request. */
export const RESPONSES_INPUT_OVERHEAD = 3;

const err = (message: string, param: string | null, code: string | null = null) => ({ ok: false as const, error: { message, param, code } });

/** Validates a parsed Responses body minimally; returns the request or a 400 reason. */
export function validateResponsesRequest(body: unknown): SimResult<SimResponsesRequest> {
  if (!isRecord(body)) return err('The request body must be a JSON object.', null);
  if (typeof body.model !== 'string' || body.model === '') return err("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) {
    return err("Invalid 'input': expected a string or an array of input items.", 'input', body.input === undefined ? 'missing_required_parameter' : 'invalid_type');
  }
  if (Array.isArray(body.input)) {
    for (const [i, item] of body.input.entries()) if (!isRecord(item)) return err(`Invalid 'input[${i}]': expected an object.`, `input[${i}]`, 'invalid_type');
  }
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string') {
    return err("Invalid 'instructions': expected a string.", 'instructions', 'invalid_type');
  }
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null && !(typeof max === 'number' && Number.isInteger(max) && max >= 1)) {
    return err("Invalid 'max_output_tokens': expected an integer >= 1.", 'max_output_tokens', 'integer_below_min_value');
  }
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) return err("Invalid 'tools': expected an array.", 'tools', 'invalid_type');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') return err("Invalid 'stream': expected a boolean.", 'stream', 'invalid_type');
  return { ok: true, value: body as SimResponsesRequest };
}

/** Tokens of one content value: a string, or per part its `text` (when a string) else its JSON. */
function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTextTokens(content);
  if (!Array.isArray(content)) return content === undefined || content === null ? 0 : countTextTokens(JSON.stringify(content));
  let total = 0;
  for (const part of content) total += isRecord(part) && typeof part.text === 'string' ? countTextTokens(part.text) : countTextTokens(JSON.stringify(part) ?? '');
  return total;
}

/** Tokens of one input item: message content, function call name + arguments, call output, or else its JSON. */
function itemTokens(item: unknown): number {
  if (typeof item === 'string') return countTextTokens(item);
  if (!isRecord(item)) return countTextTokens(JSON.stringify(item) ?? '');
  if (item.type === 'function_call') return countTextTokens(String(item.name ?? '')) + countTextTokens(String(item.arguments ?? ''));
  if (item.type === 'function_call_output') return contentTokens(item.output);
  if (typeof item.role === 'string') return contentTokens(item.content);
  return countTextTokens(JSON.stringify(item));
}

/**
 * Input tokens of a Responses request: 3 + tokens(instructions) + tokens of the input (a string, or
 * per item as `itemTokens`) + tokens(JSON.stringify(tools)) when tools is non-empty. Counting uses
 * o200k `countTextTokens`, text by text (no per-item overhead).
 */
export function countResponsesInputTokens(req: { instructions?: unknown; input?: unknown; tools?: unknown }): number {
  let total = RESPONSES_INPUT_OVERHEAD;
  if (typeof req.instructions === 'string') total += countTextTokens(req.instructions);
  if (typeof req.input === 'string') total += countTextTokens(req.input);
  else if (Array.isArray(req.input)) for (const item of req.input) total += itemTokens(item);
  if (Array.isArray(req.tools) && req.tools.length > 0) total += countTextTokens(JSON.stringify(req.tools));
  return total;
}

/** Text of the last user message of the input (the whole input when it is a string). */
function lastUserText(input: string | unknown[]): string {
  if (typeof input === 'string') return input;
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as Rec;
    if (item.role === 'user') return partsText(item.content, ['input_text', 'text']);
  }
  return '';
}

/** The function to call, null for none, or a 400 reason for an unknown forced function. */
function pickFunction(req: SimResponsesRequest): { name: string; parameters: unknown } | null | SimRequestError {
  const functions = (req.tools ?? []).flatMap((t) => (isRecord(t) && t.type === 'function' && typeof t.name === 'string' ? [{ name: t.name, parameters: t.parameters }] : []));
  const choice = req.tool_choice;
  const last = Array.isArray(req.input) ? (req.input[req.input.length - 1] as Rec | undefined) : undefined;
  if (functions.length === 0 || choice === 'none' || last?.type === 'function_call_output') return null;
  if (isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string') {
    const forced = choice.name;
    return functions.find((f) => f.name === forced) ?? { message: `Invalid 'tool_choice': no function named '${forced}' in tools.`, param: 'tool_choice', code: null };
  }
  if (isRecord(choice) && choice.type !== 'allowed_tools') return null; // a hosted tool is forced
  return functions[0]!;
}

const hasWebSearch = (tools: unknown[] | null | undefined) =>
  (tools ?? []).some((t) => isRecord(t) && typeof t.type === 'string' && /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/.test(t.type));

/** A tool as a Response echoes it: function tools get the API's defaults (description null, strict true). */
const echoTool = (t: unknown): unknown =>
  (isRecord(t) && t.type === 'function' ? { type: 'function', name: t.name, description: null, parameters: null, strict: true, ...t } : t);

/** The request fields a Response echoes, with the API's defaults. */
function echoFields(req: SimResponsesRequest): Rec {
  return {
    background: req.background ?? false, instructions: req.instructions ?? null, max_output_tokens: req.max_output_tokens ?? null,
    max_tool_calls: req.max_tool_calls ?? null, parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null, prompt_cache_key: req.prompt_cache_key ?? null,
    reasoning: req.reasoning ?? { effort: null, summary: null }, safety_identifier: req.safety_identifier ?? null, service_tier: 'default',
    store: req.store ?? true, temperature: req.temperature ?? 1, text: req.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: req.tool_choice ?? 'auto', tools: (req.tools ?? []).map(echoTool), top_logprobs: req.top_logprobs ?? 0, top_p: req.top_p ?? 1,
    truncation: req.truncation ?? 'disabled', ...(typeof req.user === 'string' ? { user: req.user } : {}), metadata: req.metadata ?? {},
  };
}

const memo = new Memo<SimResult<ResponsesAnswer>>();

/**
 * Computes the deterministic answer to a validated request; `rawBody` seeds ids. `created_at` is now;
 * `words` (fault answer_words) fixes the text's word count.
 */
export function answerResponses(req: SimResponsesRequest, rawBody: string, words?: number): SimResult<ResponsesAnswer> {
  const result = memo.get(answerKey(rawBody, words), () => computeAnswer(req, rawBody, words));
  return result.ok ? { ok: true, value: { ...result.value, created_at: Math.floor(Date.now() / 1000) } } : result;
}

function computeAnswer(req: SimResponsesRequest, rawBody: string, words: number | undefined): SimResult<ResponsesAnswer> {
  const hash = bodyHash(rawBody);
  const inputTokens = countResponsesInputTokens(req);
  const cached = typeof req.prompt_cache_key === 'string' && req.prompt_cache_key !== '' ? Math.floor(inputTokens / 2) : 0;
  const usage = (output: number): ResponsesUsage => ({
    input_tokens: inputTokens, input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
    output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + output,
  });
  const base = { id: `resp_sim${hash.slice(0, 24)}`, created_at: Math.floor(Date.now() / 1000), model: req.model, echo: echoFields(req) };
  const fn = pickFunction(req);
  if (fn !== null && 'message' in fn) return { ok: false, error: fn };
  if (fn !== null) {
    const args = JSON.stringify(sampleObject(fn.parameters));
    const call = { id: `fc_sim${hash.slice(24, 48)}`, call_id: `call_sim_${hash.slice(40, 64)}`, name: fn.name, arguments: args };
    return { ok: true, value: { ...base, searches: [], message: null, call, incomplete: false, usage: usage(countTextTokens(fn.name + args)) } };
  }
  const user = lastUserText(req.input);
  const count = hasWebSearch(req.tools) && req.tool_choice !== 'none' ? webSearchCount(user) : 0;
  const searches = Array.from({ length: count }, (_, i) => ({ id: `ws_sim${hash.slice(48, 64)}_${i}`, query: quote(user.trim()) }));
  const format = responsesJsonFormat(req.text);
  const budget = outputBudget(req.max_output_tokens);
  const { text, tokens, cut } = format && words === undefined ? fitText(jsonAnswer(format, user), budget) : sizedReply(user, budget, words);
  const message = { id: `msg_sim${hash.slice(24, 48)}`, text, words: splitWords(text) };
  return { ok: true, value: { ...base, searches, message, call: null, incomplete: cut, usage: usage(tokens) } };
}

/** The output items of a finished answer, in order. */
export function outputItems(a: ResponsesAnswer): Rec[] {
  const items: Rec[] = a.searches.map((s) => webSearchItem(s, 'completed'));
  if (a.message) items.push(messageItem(a, a.incomplete ? 'incomplete' : 'completed', a.message.text));
  if (a.call) items.push(functionCallItem(a, 'completed', a.call.arguments));
  return items;
}

export const webSearchItem = (s: { id: string; query: string }, status: string): Rec =>
  ({ id: s.id, type: 'web_search_call', status, action: { type: 'search', query: s.query } });

export const outputTextPart = (text: string): Rec => ({ type: 'output_text', annotations: [], logprobs: [], text });

export const messageItem = (a: ResponsesAnswer, status: string, text: string | null): Rec =>
  ({ id: a.message!.id, type: 'message', status, content: text === null ? [] : [outputTextPart(text)], role: 'assistant' });

export const functionCallItem = (a: ResponsesAnswer, status: string, args: string): Rec =>
  ({ id: a.call!.id, type: 'function_call', status, arguments: args, call_id: a.call!.call_id, name: a.call!.name });

/**
 * The Response object: `final` is the finished one (status completed/incomplete, output, usage or
 * null when `omitUsage`); otherwise the in-progress snapshot of response.created / .in_progress.
 */
export function responseBody(a: ResponsesAnswer, final: boolean, omitUsage = false): Rec {
  const status = !final ? 'in_progress' : a.incomplete ? 'incomplete' : 'completed';
  return {
    id: a.id, object: 'response', created_at: a.created_at, status,
    completed_at: status === 'completed' ? a.created_at : null, error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    ...a.echo, model: a.model, output: final ? outputItems(a) : [],
    usage: final && !omitUsage ? a.usage : null,
  };
}
