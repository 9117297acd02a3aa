/**
 * The simulator's deterministic chat-completions logic: request validation, the answer (text or one
 * tool call), usage, and the OpenAI JSON / stream-chunk shapes. No I/O; answers are memoised by body.
 */
import { countChatPromptTokens, countTextTokens } from '../tokenize.js';
import { logprobsOf, type SimLogprobs } from './chat-logprobs.js';
import { chatJsonFormat, jsonAnswer } from './structured.js';
import { answerKey, bodyHash, fitText, isRecord, Memo, outputBudget, partsText, sampleObject, sizedReply, slices, splitWords, type Rec } from './text.js';

/** The request fields the simulator looks at. */
export interface SimChatRequest {
  model: string;
  messages: unknown[];
  tools?: unknown[];
  tool_choice?: unknown;
  stream?: boolean;
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  prompt_cache_key?: string;
  response_format?: unknown;
  /** Choices to answer (default 1); each is the same deterministic answer. */
  n?: number | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
}

/** An OpenAI-style 400 reason. */
export interface SimRequestError { message: string; param: string | null; code: string | null }

/** Usage exactly as the simulator reports it. */
export interface SimUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** A computed answer, shared by the JSON and the stream encodings. */
export interface SimAnswer {
  id: string;
  created: number;
  model: string;
  /** Text reply split into stream pieces (each word with its leading whitespace); empty for tool calls. */
  words: string[];
  content: string | null;
  toolCall: { id: string; name: string; arguments: string } | null;
  finishReason: 'stop' | 'length' | 'tool_calls';
  /** How many choices the answer has (`n`); usage counts every choice's output tokens. */
  choices: number;
  /** Each choice's `logprobs` (null unless the request asked for them). */
  logprobs: SimLogprobs | null;
  usage: SimUsage;
}

const FINGERPRINT = 'fp_sim';

/** Either a value or an OpenAI-style 400 reason. */
export type SimResult<T> = { ok: true; value: T } | { ok: false; error: SimRequestError };

/** Validates a parsed chat body minimally, as OpenAI does; returns the request or a 400 reason. */
export function validateChatRequest(body: unknown): SimResult<SimChatRequest> {
  const err = (message: string, param: string | null, code: string | null = null) => ({ ok: false as const, error: { message, param, code } });
  if (!isRecord(body)) return err('The request body must be a JSON object.', null);
  if (typeof body.model !== 'string' || body.model === '') return err("you must provide a model parameter", 'model');
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    return err("Invalid 'messages': expected a non-empty array.", 'messages', 'empty_array');
  }
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m) || typeof m.role !== 'string') return err(`Invalid 'messages[${i}]': expected an object with a role.`, `messages[${i}]`);
  }
  for (const key of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = body[key];
    if (v !== undefined && v !== null && !(typeof v === 'number' && Number.isInteger(v) && v >= 1)) {
      return err(`Invalid '${key}': expected an integer >= 1.`, key, 'integer_below_min_value');
    }
  }
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) return err("Invalid 'tools': expected an array.", 'tools');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') return err("Invalid 'stream': expected a boolean.", 'stream');
  if (body.n !== undefined && body.n !== null && !(typeof body.n === 'number' && Number.isInteger(body.n) && body.n >= 1 && body.n <= 128)) {
    return err("Invalid 'n': expected an integer from 1 to 128.", 'n', 'integer_out_of_range');
  }
  const top = body.top_logprobs;
  if (top !== undefined && top !== null && !(typeof top === 'number' && Number.isInteger(top) && top >= 0 && top <= 20)) {
    return err("Invalid 'top_logprobs': expected an integer from 0 to 20.", 'top_logprobs', 'integer_out_of_range');
  }
  if (typeof top === 'number' && top > 0 && body.logprobs !== true) return err("Invalid 'top_logprobs': 'logprobs' must be true when 'top_logprobs' is set.", 'top_logprobs');
  return { ok: true, value: body as unknown as SimChatRequest };
}

/** Plain text of a message content: a string or the text parts of a content array. */
const contentText = (content: unknown): string => partsText(content, ['text']);

/** The function tool to call, null for a text answer, or a 400 reason for an unknown forced tool. */
function pickTool(req: SimChatRequest): { name: string; parameters: unknown } | null | SimRequestError {
  const tools = (req.tools ?? []).flatMap((t) =>
    isRecord(t) && t.type === 'function' && isRecord(t.function) && typeof t.function.name === 'string'
      ? [{ name: t.function.name, parameters: t.function.parameters }] : []);
  const last = req.messages[req.messages.length - 1] as Rec;
  if (tools.length === 0 || req.tool_choice === 'none' || last.role === 'tool') return null;
  const choice = req.tool_choice;
  if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    const forced = choice.function.name;
    const found = tools.find((t) => t.name === forced);
    return found ?? { message: `Invalid 'tool_choice': no function named '${forced}' in tools.`, param: 'tool_choice', code: null };
  }
  return tools[0]!;
}

/**
 * The reply text within `budget` tokens, quoting the last user message: the JSON `response_format`
 * asks for (issue 31 item 13), else the natural reply, or exactly `words` words (fault answer_words).
 */
function chatReply(req: SimChatRequest, budget: number, words: number | undefined): { text: string; tokens: number; cut: boolean } {
  let user = '';
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i] as Rec;
    if (m.role === 'user') { user = contentText(m.content); break; }
  }
  const format = chatJsonFormat(req.response_format);
  if (format && words === undefined) return fitText(jsonAnswer(format, user), budget);
  return sizedReply(user, budget, words);
}

/** Recent answers by raw body (benchmarks repeat bodies); `created` is refreshed on every call. */
const memo = new Memo<SimResult<SimAnswer>>();

/**
 * Computes the deterministic answer to a validated request; `rawBody` seeds ids (and keys a small
 * cache); `words` (fault answer_words) fixes the text's word count.
 */
export function answerChat(req: SimChatRequest, rawBody: string, words?: number): SimResult<SimAnswer> {
  const result = memo.get(answerKey(rawBody, words), () => computeAnswer(req, rawBody, words));
  return result.ok ? { ok: true, value: { ...result.value, created: Math.floor(Date.now() / 1000) } } : result;
}

function computeAnswer(req: SimChatRequest, rawBody: string, words: number | undefined): SimResult<SimAnswer> {
  const hash = bodyHash(rawBody);
  const promptTokens = countChatPromptTokens(req.messages, req.tools ?? undefined);
  const first = req.messages[0] as Rec;
  const systemText = first.role === 'system' || first.role === 'developer' ? contentText(first.content) : '';
  const cachedHit = (typeof req.prompt_cache_key === 'string' && req.prompt_cache_key !== '')
    || (systemText.length > 1024 && countTextTokens(systemText) > 1024);
  const choices = req.n ?? 1;
  const base = { id: `chatcmpl-sim${hash.slice(0, 24)}`, created: Math.floor(Date.now() / 1000), model: req.model, choices };
  // Every choice is generated and billed, as the vendor reports it: n times one choice's tokens.
  const usage = (perChoice: number): SimUsage => ({
    prompt_tokens: promptTokens,
    completion_tokens: perChoice * choices,
    total_tokens: promptTokens + perChoice * choices,
    prompt_tokens_details: { cached_tokens: cachedHit ? Math.floor(promptTokens / 2) : 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
  const tool = pickTool(req);
  if (tool !== null && 'message' in tool) return { ok: false, error: tool };
  if (tool !== null) {
    const args = JSON.stringify(isRecord(tool.parameters) ? sampleObject(tool.parameters, 0) : {});
    const toolCall = { id: `call_sim_${hash.slice(24, 48)}`, name: tool.name, arguments: args };
    const logprobs = req.logprobs === true ? { content: null, refusal: null } : null;
    const value: SimAnswer = { ...base, words: [], content: null, toolCall, finishReason: 'tool_calls', logprobs, usage: usage(countTextTokens(tool.name + args)) };
    return { ok: true, value };
  }
  const budget = outputBudget(req.max_tokens ?? req.max_completion_tokens);
  const { text, tokens, cut } = chatReply(req, budget, words);
  const pieces = splitWords(text);
  const logprobs = req.logprobs === true ? logprobsOf(pieces, req.top_logprobs ?? 0) : null;
  const value: SimAnswer = { ...base, words: pieces, content: text, toolCall: null, finishReason: cut ? 'length' : 'stop', logprobs, usage: usage(tokens) };
  return { ok: true, value };
}

/** The `chat.completion` JSON body; `usage` is left out when `omitUsage`. */
export function completionBody(a: SimAnswer, omitUsage: boolean): Rec {
  const toolCalls = a.toolCall
    ? { tool_calls: [{ id: a.toolCall.id, type: 'function', function: { name: a.toolCall.name, arguments: a.toolCall.arguments } }] }
    : {};
  const message = { role: 'assistant', content: a.content, ...toolCalls, refusal: null, annotations: [] };
  const choices = Array.from({ length: a.choices }, (_, index) => ({ index, message, logprobs: a.logprobs, finish_reason: a.finishReason }));
  const body: Rec = { id: a.id, object: 'chat.completion', created: a.created, model: a.model, choices };
  if (!omitUsage) body.usage = a.usage;
  body.service_tier = 'default';
  body.system_fingerprint = FINGERPRINT;
  return body;
}

/** The characters of the simulator's `obfuscation` padding. */
const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * The `obfuscation` member OpenAI adds to every chunk unless `stream_options.include_obfuscation` is
 * false: random characters that vary the chunk's size. Here derived from the chunk's index and the
 * length of its delta (the simulator answers a body the same way every time), 1 to 16 characters.
 */
function obfuscation(index: number, deltaLength: number): string {
  const length = 1 + ((index * 7 + deltaLength) % 16);
  let out = '';
  for (let i = 0; i < length; i++) out += PADDING[(index * 31 + deltaLength * 17 + i * 13) % PADDING.length];
  return `,"obfuscation":"${out}"`;
}

/**
 * Every server-sent event of the stream in order, each framed as `data: {chunk}\n\n` (without the
 * final `data: [DONE]`): per choice (index 0 to n - 1, one after the other) its role chunk, content
 * (each with its word's `logprobs` when asked) or tool-call chunks and finish chunk; then the usage
 * chunk when `includeUsage`; each chunk ends with its `obfuscation` member when `obfuscate`, as
 * OpenAI's do by default (after `usage`). Chunks are serialised from a shared prefix, so long streams stay cheap.
 */
export function streamEvents(a: SimAnswer, includeUsage: boolean, obfuscate = false): string[] {
  const head = JSON.stringify({
    id: a.id, object: 'chat.completion.chunk', created: a.created, model: a.model, service_tier: 'default', system_fingerprint: FINGERPRINT,
  }).slice(0, -1);
  const usageNull = includeUsage ? ',"usage":null' : '';
  let index = 0;
  const end = (inner: string): string => `${obfuscate ? obfuscation(index++, inner.length) : ''}}\n\n`;
  const out: string[] = [];
  for (let choice = 0; choice < a.choices; choice++) {
    const event = (delta: Rec, finish: string | null = null, logprobs: unknown = null) => {
      const inner = JSON.stringify(delta);
      return `data: ${head},"choices":[{"index":${choice},"delta":${inner},"logprobs":${JSON.stringify(logprobs)},"finish_reason":${JSON.stringify(finish)}}]${usageNull}${end(inner)}`;
    };
    if (a.toolCall) {
      const { id, name, arguments: args } = a.toolCall;
      out.push(event({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }], refusal: null }));
      for (const piece of slices(args, 3)) out.push(event({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    } else {
      out.push(event({ role: 'assistant', content: '', refusal: null }));
      a.words.forEach((word, i) => out.push(event({ content: word }, null, a.logprobs?.content ? { content: [a.logprobs.content[i]], refusal: null } : null)));
    }
    out.push(event({}, a.finishReason));
  }
  if (includeUsage) {
    const usage = JSON.stringify(a.usage);
    out.push(`data: ${head},"choices":[],"usage":${usage}${end(usage)}`);
  }
  return out;
}
