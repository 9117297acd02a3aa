/** Registry of client formats by id. A new wire format is one folder here. */
import { anthropicMessagesFormat } from './anthropic-messages/index.js';
import { cohereFormat } from './cohere/index.js';
import { nativeJsonFormat } from './native-json/index.js';
import { openaiChatFormat } from './openai-chat/index.js';
import { openaiResponsesFormat } from './openai-responses/index.js';
import type { ClientFormat } from './types.js';

const FORMATS = new Map<string, ClientFormat>([openaiChatFormat, openaiResponsesFormat, anthropicMessagesFormat, nativeJsonFormat, cohereFormat].map((f) => [f.id, f]));

/** The format of answers that match no route (404s, unparseable bodies): the completions-style shape. */
export const DEFAULT_CLIENT_FORMAT: ClientFormat = openaiChatFormat;

/** The client format with this id, or undefined (config compile refuses a route naming one). */
export function findClientFormat(id: string): ClientFormat | undefined {
  return FORMATS.get(id);
}

/** The client format with this id; throws for an id no route should be able to name. */
export function clientFormat(id: string): ClientFormat {
  const format = FORMATS.get(id);
  if (!format) throw new Error(`unknown client format "${id}"`);
  return format;
}

/** Ids of every known client format (checked by config compile). */
export function formatIds(): string[] {
  return [...FORMATS.keys()];
}
