/**
 * The simulator's deterministic Anthropic Messages logic (`POST /v1/messages`, `/v1/messages/count_tokens`):
 * validation, input token counting, and the answer (web searches then text, or one tool_use) before
 * prompt caching is applied. No I/O; answers are memoised by body. Usage and wire shapes: messages-wire.ts.
 */
import { countTextTokens } from '../tokenize.js';
import { isOpenObject, jsonAnswer, messagesJsonFormat, promptObject } from './structured.js';
import {
  answerKey, bodyHash, fitText, isRecord, Memo, outputBudget, partsText, quote, sampleObject, sizedReply, splitWords, webSearchCount, type Rec,
} from './text.js';

/** The request fields the simulator looks at. */
export interface SimMessagesRequest {
  model: string;
  max_tokens: number;
  messages: Rec[];
  system?: string | unknown[];
  tools?: unknown[];
  tool_choice?: unknown;
  stream?: boolean;
  stop_sequences?: string[];
  cache_control?: unknown;
  /** `format` asks for structured output (`{type: json_schema, schema}`). */
  output_config?: unknown;
}

/** A content block of the answer, as it appears in `content`. */
export type MessagesBlock = Rec & { type: 'text' | 'tool_use' | 'server_tool_use' | 'web_search_tool_result' };

/** A computed answer before prompt caching (which depends on earlier requests) is applied. */
export interface MessagesAnswer {
  id: string;
  model: string;
  content: MessagesBlock[];
  /** Text pieces of the text block for the stream (each word with its leading whitespace). */
  words: string[];
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';
  stop_sequence: string | null;
  output_tokens: number;
  /** All input tokens (what count_tokens reports), before the cache split. */
  total_input_tokens: number;
  web_search_requests: number;
  /** Set when a block, the system prompt, a tool or the request carries `cache_control`: the cache key and TTL. */
  cache: { key: string; ttl: '5m' | '1h' } | null;
}

/** `Either` a value or an Anthropic invalid_request_error message. */
export type MessagesResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Fixed input-token overhead of every Messages request (and count_tokens answer). */
export const MESSAGES_INPUT_OVERHEAD = 3;
const DIRECT = { type: 'direct' };

const fail = (message: string) => ({ ok: false as const, message });

/** Validates a parsed Messages (or, with `countOnly`, count_tokens) body minimally, as Anthropic does. */
export function validateMessagesRequest(body: unknown, countOnly = false): MessagesResult<SimMessagesRequest> {
  if (!isRecord(body)) return fail('Request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') return fail('model: Field required');
  if (!countOnly) {
    if (body.max_tokens === undefined) return fail('max_tokens: Field required');
    if (!(typeof body.max_tokens === 'number' && Number.isInteger(body.max_tokens) && body.max_tokens >= 1)) {
      return fail('max_tokens: Input should be an integer greater than or equal to 1');
    }
  }
  if (!Array.isArray(body.messages)) return fail('messages: Field required');
  if (body.messages.length === 0) return fail('messages: at least one message is required');
  for (const [i, m] of body.messages.entries()) {
    if (!isRecord(m) || (m.role !== 'user' && m.role !== 'assistant')) return fail(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return fail(`messages.${i}.content: Field required`);
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) return fail('system: Input should be a valid string or list');
  if (body.tools !== undefined && !Array.isArray(body.tools)) return fail('tools: Input should be a valid list');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return fail('stream: Input should be a valid boolean');
  const stops = body.stop_sequences;
  if (stops !== undefined && !(Array.isArray(stops) && stops.every((s) => typeof s === 'string'))) return fail('stop_sequences: Input should be a valid list of strings');
  return { ok: true, value: body as unknown as SimMessagesRequest };
}

/** Tokens of a content value: a string, or per block its text / tool_use name + input / tool_result content / else JSON. */
function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTextTokens(content);
  if (!Array.isArray(content)) return content === undefined || content === null ? 0 : countTextTokens(JSON.stringify(content));
  let total = 0;
  for (const block of content) {
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') total += countTextTokens(block.text);
    else if (isRecord(block) && block.type === 'tool_use') total += countTextTokens(String(block.name ?? '')) + countTextTokens(JSON.stringify(block.input ?? {}));
    else if (isRecord(block) && block.type === 'tool_result') total += contentTokens(block.content);
    else total += countTextTokens(JSON.stringify(block) ?? '');
  }
  return total;
}

/**
 * All input tokens of a Messages / count_tokens request: 3 + tokens(system) + tokens of every
 * message's content (see `contentTokens`; roles cost nothing) + tokens(JSON.stringify(tools)) when
 * tools is non-empty; o200k `countTextTokens`, text by text.
 */
export function countMessagesInputTokens(req: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  let total = MESSAGES_INPUT_OVERHEAD + contentTokens(req.system);
  if (Array.isArray(req.messages)) for (const m of req.messages) total += isRecord(m) ? contentTokens(m.content) : 0;
  if (Array.isArray(req.tools) && req.tools.length > 0) total += countTextTokens(JSON.stringify(req.tools));
  return total;
}

const onlyToolResults = (content: unknown) => Array.isArray(content) && content.length > 0 && content.every((b) => isRecord(b) && b.type === 'tool_result');

/** Text of the last user message that is not only tool results. */
function lastUserText(messages: Rec[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && !onlyToolResults(m.content)) return partsText(m.content, ['text']);
  }
  return '';
}

/** The cache key (system text) and TTL when anything carries `cache_control`; null otherwise. */
function cacheMarker(req: SimMessagesRequest): { key: string; ttl: '5m' | '1h' } | null {
  const marks: Rec[] = [];
  const collect = (value: unknown) => { if (isRecord(value) && isRecord(value.cache_control)) marks.push(value.cache_control); };
  collect(req);
  if (Array.isArray(req.system)) req.system.forEach(collect);
  (req.tools ?? []).forEach(collect);
  for (const m of req.messages) if (Array.isArray(m.content)) m.content.forEach(collect);
  if (marks.length === 0) return null;
  return { key: partsText(req.system, ['text']), ttl: marks.some((c) => c.ttl === '1h') ? '1h' : '5m' };
}

type Picked = { kind: 'tool'; name: string; schema: unknown } | { kind: 'search'; forced: boolean } | null;

/** The client tool to call, a forced web search, null (free choice), or an error for an unknown forced tool. */
function pickTool(req: SimMessagesRequest): Picked | { message: string } {
  const custom = (req.tools ?? []).flatMap((t) => (isRecord(t) && typeof t.name === 'string' && (t.type === undefined || t.type === null || t.type === 'custom')
    ? [{ name: t.name, schema: t.input_schema }] : []));
  const choice = isRecord(req.tool_choice) ? req.tool_choice : { type: 'auto' };
  const last = req.messages[req.messages.length - 1]!;
  if (choice.type === 'none') return null;
  if (choice.type === 'tool') {
    const found = custom.find((t) => t.name === choice.name);
    if (found) return { kind: 'tool', ...found };
    if (webSearchTool(req) === choice.name) return { kind: 'search', forced: true };
    return { message: `tool_choice: tool '${String(choice.name)}' not found in tools` };
  }
  if (custom.length === 0 || (last.role === 'user' && onlyToolResults(last.content))) return null;
  return { kind: 'tool', ...custom[0]! };
}

/** The name of the web-search server tool in `tools`, if any. */
const webSearchTool = (req: SimMessagesRequest): string | undefined => {
  const tool = (req.tools ?? []).find((t) => isRecord(t) && typeof t.type === 'string' && /^web_search_\d{8}$/.test(t.type));
  return isRecord(tool) && typeof tool.name === 'string' ? tool.name : undefined;
};

const memo = new Memo<MessagesResult<MessagesAnswer>>();

/**
 * Computes the deterministic answer to a validated request; `rawBody` seeds ids (and keys a small
 * cache); `words` (fault answer_words) fixes the text's word count. A request ending with an assistant
 * message (a prefill) is continued: see `continuePrefill`.
 */
export function answerMessages(req: SimMessagesRequest, rawBody: string, words?: number): MessagesResult<MessagesAnswer> {
  return memo.get(answerKey(rawBody, words), () => {
    const last = req.messages[req.messages.length - 1]!;
    if (last.role !== 'assistant' || req.messages.length < 2) return computeAnswer(req, rawBody, words);
    const whole = computeAnswer({ ...req, messages: req.messages.slice(0, -1) }, rawBody, words);
    return whole.ok ? { ok: true, value: continuePrefill(whole.value, req, partsText(last.content, ['text'])) } : whole;
  });
}

/**
 * The continuation of an assistant prefill: `whole` is the answer to the request without its last
 * (assistant) message; its text loses the prefix `prefill` (trailing whitespace trimmed, as the API
 * does) when it starts with it, else stays whole. Output tokens count the new text; input tokens the
 * whole request, prefill included.
 */
function continuePrefill(whole: MessagesAnswer, req: SimMessagesRequest, prefill: string): MessagesAnswer {
  const prefix = prefill.trimEnd();
  const at = whole.content.findIndex((b) => b.type === 'text');
  const base = { ...whole, total_input_tokens: countMessagesInputTokens(req), cache: cacheMarker(req) };
  if (at < 0) return base;
  const text = whole.content[at]!.text as string;
  const rest = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  const content = whole.content.map((b, i) => (i === at ? { ...b, text: rest } : b));
  return { ...base, content, words: textPieces(rest), output_tokens: countTextTokens(rest) };
}

/** Stream pieces of a text: each word with its leading whitespace, plus any trailing whitespace. */
function textPieces(text: string): string[] {
  const words = splitWords(text);
  const rest = text.slice(words.join('').length);
  if (rest !== '') words.push(rest);
  return words;
}

function computeAnswer(req: SimMessagesRequest, rawBody: string, words: number | undefined): MessagesResult<MessagesAnswer> {
  const hash = bodyHash(rawBody);
  const picked = pickTool(req);
  if (picked !== null && 'message' in picked) return fail(picked.message);
  const base = {
    id: `msg_sim${hash.slice(0, 24)}`, model: req.model, stop_sequence: null,
    total_input_tokens: countMessagesInputTokens(req), cache: cacheMarker(req),
  };
  if (picked?.kind === 'tool') {
    // A tool whose input is any object (the gateway's json_object translation) gets the object the prompt asks for.
    const input = isOpenObject(picked.schema) ? promptObject(lastUserText(req.messages)) : sampleObject(picked.schema);
    const block: MessagesBlock = { type: 'tool_use', id: `toolu_sim${hash.slice(24, 48)}`, name: picked.name, input, caller: DIRECT };
    const output = countTextTokens(picked.name + JSON.stringify(input));
    return { ok: true, value: { ...base, content: [block], words: [], stop_reason: 'tool_use', output_tokens: output, web_search_requests: 0 } };
  }
  const user = lastUserText(req.messages);
  const searchName = webSearchTool(req);
  const none = isRecord(req.tool_choice) && req.tool_choice.type === 'none';
  const triggered = searchName === undefined || none ? 0 : webSearchCount(user);
  const searches = picked?.kind === 'search' ? Math.max(1, triggered) : triggered;
  const content: MessagesBlock[] = [];
  for (let i = 0; i < searches; i++) {
    const id = `srvtoolu_sim${hash.slice(48, 64)}_${i}`;
    const query = quote(user.trim());
    content.push({ type: 'server_tool_use', id, name: 'web_search', input: { query }, caller: DIRECT });
    const result = { type: 'web_search_result', url: `https://example.com/sim/${i + 1}`, title: `Simulated result ${i + 1}`, encrypted_content: 'c2lt', page_age: null };
    content.push({ type: 'web_search_tool_result', tool_use_id: id, content: [result], caller: DIRECT });
  }
  const format = messagesJsonFormat(req.output_config);
  let { text, tokens, cut } = format && words === undefined ? fitText(jsonAnswer(format, user), outputBudget(req.max_tokens)) : sizedReply(user, outputBudget(req.max_tokens), words);
  let stop: string | null = null;
  for (const seq of req.stop_sequences ?? []) {
    const at = seq === '' ? -1 : text.indexOf(seq);
    if (at >= 0 && (stop === null || at < text.indexOf(stop))) stop = seq;
  }
  if (stop !== null) {
    text = text.slice(0, text.indexOf(stop));
    tokens = countTextTokens(text);
  }
  // No `citations` member: the API omits it on uncited text (and @ai-sdk/anthropic 3.x refuses null).
  content.push({ type: 'text', text });
  const stopReason = stop !== null ? 'stop_sequence' : cut ? 'max_tokens' : 'end_turn';
  return { ok: true, value: { ...base, content, words: textPieces(text), stop_reason: stopReason, stop_sequence: stop, output_tokens: tokens, web_search_requests: searches } };
}
