/**
 * A Converse answer (ConverseResponse: output.message, stopReason, usage) as a Messages `message`:
 * text blocks as `text`, `toolUse` blocks as `tool_use` (toolUseId -> id), the stop reason mapped,
 * usage with Bedrock's cache counters under Anthropic's names.
 */
import { randomUUID } from 'node:crypto';
import type { TokenUsage } from '../types.js';
import { converseTokenUsage, messagesStopReason, messagesUsage, readConverseUsage } from './usage.js';

type Json = Record<string, unknown>;

/** A Messages id for an answer (Converse answers carry none): after the gateway's request id when known. */
export function messageId(requestId?: string): string {
  return `msg_bdrk_${requestId ? requestId.replace(/[^A-Za-z0-9_]/g, '') : randomUUID().replaceAll('-', '')}`;
}

/** The Messages body, the normalized usage and the generated text of a Converse answer. */
export function toMessagesAnswer(upstream: Json, clientModel: string, requestId?: string): { body: Json; usage: TokenUsage | null; outputText: string } {
  const message = ((upstream.output as Json | undefined)?.message ?? {}) as { content?: unknown };
  const blocks = Array.isArray(message.content) ? (message.content as Json[]) : [];
  const content: Json[] = [];
  const generated: string[] = [];
  for (const block of blocks) {
    if (typeof block.text === 'string') {
      content.push({ type: 'text', text: block.text });
      generated.push(block.text);
    } else if (block.toolUse && typeof block.toolUse === 'object') {
      const use = block.toolUse as { toolUseId?: unknown; name?: unknown; input?: unknown };
      content.push({ type: 'tool_use', id: use.toolUseId, name: use.name, input: use.input ?? {} });
      generated.push(String(use.name ?? ''), JSON.stringify(use.input ?? {}));
    }
    // reasoningContent, citations and guardrail blocks are never asked for by this translator.
  }
  const counters = readConverseUsage(upstream.usage);
  const body: Json = {
    id: messageId(requestId), type: 'message', role: 'assistant', model: clientModel, content,
    stop_reason: messagesStopReason(upstream.stopReason), stop_sequence: null,
    usage: counters ? messagesUsage(counters) : { input_tokens: 0, output_tokens: 0 },
  };
  return { body, usage: counters ? converseTokenUsage(counters) : null, outputText: generated.join('') };
}
