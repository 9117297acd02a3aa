/**
 * Input items as a stored response keeps them (issue 31 item 3, OpenAI's ResponseItemList): each
 * item of the request's `input` with an id and a `type`, a message's string content as one text part;
 * and the conversation a `previous_response_id` stands for: the earlier turns, that response's input
 * and its output, in order (OpenAI: "the model will use the previous response's input and output").
 */
import { randomId } from '../ledger/ids.js';
import type { StoredResponse } from './records.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Id prefixes of the item types OpenAI names (`msg_`, `fc_`, ...); any other type gets `item_`. */
const PREFIXES: Readonly<Record<string, string>> = {
  message: 'msg_', function_call: 'fc_', function_call_output: 'fco_', custom_tool_call: 'ctc_', custom_tool_call_output: 'ctco_',
};

/** One input item with its id and type, a string content as one part. */
function withId(item: Json): Json {
  const type = typeof item.type === 'string' ? item.type : 'message';
  const out: Json = { ...item, id: typeof item.id === 'string' ? item.id : randomId(PREFIXES[type] ?? 'item_'), type };
  if (type === 'message' && typeof item.content === 'string') {
    out.content = [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }];
  }
  return out;
}

/** The request's `input` as stored items (a string is one user message). */
export function inputItems(input: unknown): Json[] {
  if (typeof input === 'string') return [withId({ role: 'user', content: input })];
  if (!Array.isArray(input)) return [];
  return input.filter(isObject).map(withId);
}

/** The items a continuation of `previous` sends before its own input. */
export function conversationOf(previous: StoredResponse): Json[] {
  const output = Array.isArray(previous.response?.output) ? (previous.response.output as unknown[]).filter(isObject) : [];
  return [...previous.context, ...previous.inputItems, ...output];
}

/** A page of OpenAI's ResponseItemList: `order` desc (OpenAI's default) is newest first; `after` an item id. */
export function itemPage(items: readonly Json[], limit: number, order: 'asc' | 'desc', after: string | null): Json {
  const ordered = order === 'asc' ? [...items] : [...items].reverse();
  const start = after === null ? 0 : ordered.findIndex((item) => item.id === after) + 1;
  const data = start === 0 && after !== null ? [] : ordered.slice(start, start + limit);
  return {
    object: 'list', data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
    has_more: start + data.length < ordered.length && !(start === 0 && after !== null),
  };
}
