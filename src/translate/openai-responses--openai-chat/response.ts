/** A chat.completion JSON answer -> a Responses `Response`. */
import type { UsageDialect } from '../../config/usage-dialect.js';
import { readChatUsage } from '../openai-chat--openai-chat/chunks.js';
import type { TokenUsage } from '../types.js';
import { isObject, type Json } from './common.js';
import { buildResponse, finishStatus, Ids, messageItem, responsesUsage, toolItem, type MessagePart, type ToolCall } from './envelope.js';

/** The tool calls of a chat message, as Responses calls. */
function toolCalls(calls: unknown, ids: Ids): ToolCall[] {
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObject).map((call, index) => {
    const custom = call.type === 'custom';
    const body = (custom ? call.custom : call.function) as { name?: unknown; arguments?: unknown; input?: unknown } | undefined;
    const args = custom ? body?.input : body?.arguments;
    return {
      custom,
      id: ids.call(index, custom),
      callId: typeof call.id === 'string' ? call.id : ids.callId(index),
      name: typeof body?.name === 'string' ? body.name : '',
      args: typeof args === 'string' ? args : '',
    };
  });
}

/** What a chat answer's Response is built from besides the answer itself. */
export interface ResponseContext {
  /** The client's Responses request body (the Response echoes its parameters). */
  client: Json;
  /** When the gateway received the request, in seconds since the epoch (the Response's `created_at`). */
  createdAt: number;
  /** The model id the client is answered with (the offering's, not the upstream's). */
  clientModel: string;
  /** The gateway's request id (`req_...`): the Response and its items are named after it; absent: after the chat answer's id. */
  requestId?: string;
  /** How the vendor reports usage where it differs from OpenAI's chat format; absent or null: as OpenAI. */
  dialect?: UsageDialect | null;
}

/** The client body, normalized usage and generated text for one chat answer. */
export function translateResponse(upstream: Json, context: ResponseContext): { body: Json; usage: TokenUsage | null; outputText: string } {
  const { client, createdAt, clientModel, requestId, dialect = null } = context;
  const ids = new Ids(upstream.id, requestId);
  const choices = Array.isArray(upstream.choices) ? upstream.choices.filter(isObject) : [];
  const choice = choices.find((c) => (c.index ?? 0) === 0) ?? choices[0] ?? {};
  const message = isObject(choice.message) ? choice.message : {};
  const { status, incomplete } = finishStatus(choice.finish_reason);

  const parts: MessagePart[] = [];
  if (typeof message.content === 'string' && message.content !== '') parts.push({ type: 'output_text', text: message.content });
  if (typeof message.refusal === 'string' && message.refusal !== '') parts.push({ type: 'refusal', text: message.refusal });
  const calls = toolCalls(message.tool_calls, ids);

  const output: Json[] = [];
  if (parts.length > 0) output.push(messageItem(ids.message(), parts, 'completed'));
  for (const call of calls) output.push(toolItem(call, 'completed'));
  // The item being generated when the answer was cut is the last one.
  const last = output[output.length - 1];
  if (status === 'incomplete' && last && 'status' in last) last.status = 'incomplete';

  const usage = readChatUsage(upstream.usage as Parameters<typeof readChatUsage>[0], dialect);
  const body = buildResponse(client, {
    id: ids.response,
    createdAt,
    model: clientModel,
    status,
    incomplete,
    output,
    usage: responsesUsage(usage, upstream.usage),
    serviceTier: upstream.service_tier,
  });
  const outputText = [...parts.map((p) => p.text), ...calls.flatMap((c) => [c.name, c.args])].join('');
  return { body, usage, outputText };
}
