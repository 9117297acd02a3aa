/**
 * The simulator's deterministic chat-completions logic: request validation, the answer (text or one
 * tool call), usage, and the OpenAI JSON / stream-chunk shapes. No I/O; answers are memoised by body.
 */
import { countChatPromptTokens, countTextTokens } from '../tokenize.js';
import { answerKey, bodyHash, isRecord, Memo, outputBudget, partsText, sampleObject, sizedReply, slices, splitWords, type Rec } from './text.js';

export { DEFAULT_MAX_TOKENS } from './text.js';

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

/** The reply text within `budget` tokens (or of exactly `words` words), quoting the last user message. */
function chatReply(req: SimChatRequest, budget: number, words: number | undefined): { text: string; tokens: number; cut: boolean } {
  let user = '';
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i] as Rec;
    if (m.role === 'user') { user = contentText(m.content); break; }
  }
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
  const base = { id: `chatcmpl-sim${hash.slice(0, 24)}`, created: Math.floor(Date.now() / 1000), model: req.model };
  const usage = (completion: number): SimUsage => ({
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: cachedHit ? Math.floor(promptTokens / 2) : 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
  const tool = pickTool(req);
  if (tool !== null && 'message' in tool) return { ok: false, error: tool };
  if (tool !== null) {
    const args = JSON.stringify(isRecord(tool.parameters) ? sampleObject(tool.parameters, 0) : {});
    const toolCall = { id: `call_sim_${hash.slice(24, 48)}`, name: tool.name, arguments: args };
    const value: SimAnswer = { ...base, words: [], content: null, toolCall, finishReason: 'tool_calls', usage: usage(countTextTokens(tool.name + args)) };
    return { ok: true, value };
  }
  const budget = outputBudget(req.max_tokens ?? req.max_completion_tokens);
  const { text, tokens, cut } = chatReply(req, budget, words);
  const value: SimAnswer = { ...base, words: splitWords(text), content: text, toolCall: null, finishReason: cut ? 'length' : 'stop', usage: usage(tokens) };
  return { ok: true, value };
}

/** The `chat.completion` JSON body; `usage` is left out when `omitUsage`. */
export function completionBody(a: SimAnswer, omitUsage: boolean): Rec {
  const toolCalls = a.toolCall
    ? { tool_calls: [{ id: a.toolCall.id, type: 'function', function: { name: a.toolCall.name, arguments: a.toolCall.arguments } }] }
    : {};
  const message = { role: 'assistant', content: a.content, ...toolCalls, refusal: null, annotations: [] };
  const body: Rec = {
    id: a.id, object: 'chat.completion', created: a.created, model: a.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: a.finishReason }],
  };
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
 * final `data: [DONE]`): role chunk, content or tool-call chunks, finish chunk, and the usage chunk
 * when `includeUsage`; each chunk ends with its `obfuscation` member when `obfuscate`, as OpenAI's do
 * by default (after `usage`). Chunks are serialised from a shared prefix, so long streams stay cheap.
 */
export function streamEvents(a: SimAnswer, includeUsage: boolean, obfuscate = false): string[] {
  const head = JSON.stringify({
    id: a.id, object: 'chat.completion.chunk', created: a.created, model: a.model, service_tier: 'default', system_fingerprint: FINGERPRINT,
  }).slice(0, -1);
  const usageNull = includeUsage ? ',"usage":null' : '';
  let index = 0;
  const end = (inner: string): string => `${obfuscate ? obfuscation(index++, inner.length) : ''}}\n\n`;
  const event = (delta: Rec, finish: string | null = null) => {
    const inner = JSON.stringify(delta);
    return `data: ${head},"choices":[{"index":0,"delta":${inner},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]${usageNull}${end(inner)}`;
  };
  const out: string[] = [];
  if (a.toolCall) {
    const { id, name, arguments: args } = a.toolCall;
    out.push(event({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }], refusal: null }));
    for (const piece of slices(args, 3)) out.push(event({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  } else {
    out.push(event({ role: 'assistant', content: '', refusal: null }));
    for (const word of a.words) out.push(event({ content: word }));
  }
  out.push(event({}, a.finishReason));
  if (includeUsage) {
    const usage = JSON.stringify(a.usage);
    out.push(`data: ${head},"choices":[],"usage":${usage}${end(usage)}`);
  }
  return out;
}
