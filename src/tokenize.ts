/**
 * Token counting with the o200k_base encoding (GPT-4o family and later). Used by the gateway for
 * pre-flight estimates and for billing output when an upstream reports no usage, and by the
 * simulator for the usage it reports. The counts are gpt-tokenizer's; the table behind them
 * (src/bpe.ts) takes about 4 MB instead of gpt-tokenizer's 60 and is read on the first count, not at
 * start. Special-token strings in user text count as ordinary text, never rejected (as the OpenAI API
 * does). The counts of long prompt texts are remembered, for the next turn of the same conversation.
 */
import { countO200kTokens } from './bpe.js';
import { TextCountCache } from './count-cache.js';

/** Longest piece counted in one BPE pass. */
const CHUNK_CHARS = 2048;

/** Fixed overhead per message in the chat format (`<|start|>{role}<|message|>...<|end|>`). */
const TOKENS_PER_MESSAGE = 3;
/** Extra token when a message carries a `name`. */
const TOKENS_PER_NAME = 1;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
const REPLY_PRIMING = 3;

/** Shortest text whose count is remembered: counting 256 characters takes about 3 µs, finding them about 0.6. */
const REMEMBER_MIN_CHARS = 256;

/**
 * Counts of prompt texts of REMEMBER_MIN_CHARS or more (src/count-cache.ts): at most 4 M characters
 * (4 to 8 MB) kept alive. Only prompts: a client sends them again, turn after turn; an answer's text
 * is counted once (or growing, at each checkpoint of a stream) and would only push them out.
 */
const promptCounts = new TextCountCache({ generation: 2_000_000, fingerprintFrom: 1024 });

/** Tokens of a text with the o200k_base encoding; special-token strings count as plain text. */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  return text.length <= CHUNK_CHARS ? countO200kTokens(text) : countChunks(text);
}

/** countTextTokens for a part of a prompt: remembered when long enough. */
function countPromptText(text: string): number {
  if (text.length < REMEMBER_MIN_CHARS) return countTextTokens(text);
  const known = promptCounts.get(text);
  if (known !== undefined) return known;
  const total = countTextTokens(text);
  promptCounts.set(text, total);
  return total;
}

/** Tokens of a long text, counted in chunks (see below). */
function countChunks(text: string): number {
  // A run without a split point (one letter repeated, a script written without spaces) is one piece,
  // and merging one piece takes memory and time that grow with it (src/bpe-merge.ts): count bounded
  // chunks, cut at whitespace where there is some, so that no input makes a piece longer than a chunk.
  let total = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + CHUNK_CHARS, text.length);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > start + CHUNK_CHARS / 2) end = space;
      else if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end -= 1; // never split a surrogate pair
    }
    total += countO200kTokens(text.slice(start, end));
    start = end;
  }
  return total;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Tokens of a message `content`: a string, or an array of parts (text parts by text, others by JSON). */
function countContentTokens(content: unknown): number {
  if (content === undefined || content === null) return 0;
  if (typeof content === 'string') return countPromptText(content);
  if (Array.isArray(content)) {
    let total = 0;
    for (const part of content) {
      if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') total += countPromptText(part.text);
      else if (typeof part === 'string') total += countPromptText(part);
      else total += countPromptText(JSON.stringify(part) ?? '');
    }
    return total;
  }
  return countPromptText(JSON.stringify(content) ?? '');
}

/** Tokens of an assistant message's `tool_calls` (function name and arguments of each call). */
function countToolCallTokens(toolCalls: unknown): number {
  if (!Array.isArray(toolCalls)) return 0;
  let total = 0;
  for (const call of toolCalls) {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
    if (fn === undefined) {
      total += countPromptText(JSON.stringify(call) ?? '');
      continue;
    }
    if (typeof fn.name === 'string') total += countPromptText(fn.name);
    if (typeof fn.arguments === 'string') total += countPromptText(fn.arguments);
  }
  return total;
}

/**
 * Prompt tokens of a chat request as OpenAI counts them: per message 3 tokens + tokens of role,
 * content (string, or the text parts of a content array; non-text parts count their JSON), name
 * (+1), and an assistant message's tool calls (name + arguments); +3 for reply priming; plus the
 * tokens of `JSON.stringify(tools)` when tools are given. Deterministic; never throws on odd input.
 */
export function countChatPromptTokens(messages: unknown[], tools?: unknown[]): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE;
    if (!isRecord(message)) {
      total += countPromptText(JSON.stringify(message) ?? '');
      continue;
    }
    if (typeof message.role === 'string') total += countPromptText(message.role);
    total += countContentTokens(message.content);
    if (typeof message.name === 'string') total += countPromptText(message.name) + TOKENS_PER_NAME;
    total += countToolCallTokens(message.tool_calls);
  }
  if (Array.isArray(tools) && tools.length > 0) total += countPromptText(JSON.stringify(tools));
  return total;
}

/** The text a model reads in a content value: strings, `text` fields, tool inputs and results; structure is skipped. */
function readableText(value: unknown, out: string[]): void {
  if (typeof value === 'string') { out.push(value); return; }
  if (Array.isArray(value)) { for (const item of value) readableText(item, out); return; }
  if (!isRecord(value)) return;
  for (const key of ['text', 'content', 'output', 'arguments', 'name', 'thinking']) readableText(value[key], out);
  if (value.input !== undefined) out.push(typeof value.input === 'string' ? value.input : JSON.stringify(value.input));
}

function toolsTokens(tools: unknown): number {
  return Array.isArray(tools) && tools.length > 0 ? countPromptText(JSON.stringify(tools)) : 0;
}

/**
 * Input tokens of a responses-format request: `instructions`, then `input` (a string, or items:
 * TOKENS_PER_MESSAGE each plus their readable text), then the tools' JSON; +REPLY_PRIMING.
 * An estimate for reservations and for billing when the upstream reported no usage.
 */
export function countResponsesPromptTokens(body: Record<string, unknown>): number {
  let total = REPLY_PRIMING;
  if (typeof body.instructions === 'string') total += TOKENS_PER_MESSAGE + countPromptText(body.instructions);
  const items = typeof body.input === 'string' ? [{ content: body.input }] : Array.isArray(body.input) ? body.input : [];
  for (const item of items) {
    const text: string[] = [];
    readableText(item, text);
    total += TOKENS_PER_MESSAGE + countPromptText(text.join('\n'));
  }
  return total + toolsTokens(body.tools);
}

/**
 * Input tokens of a messages-format request: `system`, then each message (TOKENS_PER_MESSAGE plus
 * its readable text: text blocks, tool inputs as JSON, tool results), then the tools' JSON;
 * +REPLY_PRIMING. Same use as above.
 */
export function countMessagesPromptTokens(body: Record<string, unknown>): number {
  let total = REPLY_PRIMING;
  if (body.system !== undefined) {
    const text: string[] = [];
    readableText(body.system, text);
    total += TOKENS_PER_MESSAGE + countPromptText(text.join('\n'));
  }
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const text: string[] = [];
    readableText(isRecord(message) ? message.content : message, text);
    total += TOKENS_PER_MESSAGE + countPromptText(text.join('\n'));
  }
  return total + toolsTokens(body.tools);
}
