/**
 * Gemini stream chunks as messages-format events: a state machine per request. The first chunk opens
 * the message (`message_start`, with the prompt's usage the vendor reports in every chunk); text parts
 * stream into one text block, opened at the first text and closed before a tool call or at the end;
 * each `functionCall` part (sent whole by the vendor) is a `tool_use` block with its input in one
 * `input_json_delta`. The vendor has no terminator: the chunk with a finish reason ends the message
 * with `message_delta` (stop reason and the final usage: the latest chunk's, never a sum) and
 * `message_stop`.
 */
import { DeliveredText } from '../delivered.js';
import { formatSse } from '../sse.js';
import type { SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { candidateParts, firstCandidate, geminiStop, geminiTokenUsage, parseChunk, partCall, partText, promptBlocked } from '../gemini-generate-content.js';
import { messageId, messagesUsage, stopReason, toolUseId } from './response.js';

const event = (type: string, data: Record<string, unknown>): string => formatSse(JSON.stringify({ type, ...data }), type);

export class GeminiToMessagesStream implements StreamTranslator {
  private id = '';
  private started = false;
  private done = false;
  /** Index of the next content block, and of the open text block (-1: none open). */
  private blocks = 0;
  private openText = -1;
  private calls = 0;
  private latest: TokenUsage | null = null;
  private readonly delivered = new DeliveredText();

  constructor(private readonly clientModel: string) {}

  push(sse: SseEvent): StreamStep {
    if (this.done) return { frames: [] };
    const parsed = parseChunk(sse.data);
    if ('error' in parsed) {
      this.done = true;
      return { frames: [], error: parsed.error };
    }
    const chunk = parsed.chunk;
    const frames: string[] = [];
    this.latest = geminiTokenUsage(chunk.usageMetadata) ?? this.latest;
    if (!this.started) {
      this.started = true;
      this.id = messageId(chunk);
      const usage = { ...messagesUsage(this.latest), output_tokens: 0 };
      frames.push(event('message_start', { message: { id: this.id, type: 'message', role: 'assistant', model: this.clientModel, content: [], stop_reason: null, stop_sequence: null, usage } }));
    }
    const candidate = firstCandidate(chunk);
    for (const part of candidateParts(candidate)) {
      const text = partText(part);
      if (text) this.text(frames, text);
      const call = partCall(part);
      if (call) this.toolUse(frames, call);
    }
    const blocked = promptBlocked(chunk);
    if (candidate?.finishReason === undefined && !blocked) return { frames };
    this.closeText(frames);
    const stop = blocked ? 'content_filter' : geminiStop(candidate!.finishReason, this.calls > 0);
    frames.push(event('message_delta', { delta: { stop_reason: stopReason(stop), stop_sequence: null }, usage: messagesUsage(this.latest) }));
    frames.push(event('message_stop', {}));
    this.done = true;
    return { frames, done: true };
  }

  usage(): TokenUsage | null {
    return this.latest;
  }

  deliveredText(): string {
    return this.delivered.text();
  }

  deliveredLength(): number { return this.delivered.length; }

  private text(frames: string[], text: string): void {
    if (this.openText < 0) {
      this.openText = this.blocks++;
      frames.push(event('content_block_start', { index: this.openText, content_block: { type: 'text', text: '' } }));
    }
    this.delivered.push(text);
    frames.push(event('content_block_delta', { index: this.openText, delta: { type: 'text_delta', text } }));
  }

  private closeText(frames: string[]): void {
    if (this.openText < 0) return;
    frames.push(event('content_block_stop', { index: this.openText }));
    this.openText = -1;
  }

  private toolUse(frames: string[], call: { id: string | null; name: string; arguments: string }): void {
    this.closeText(frames);
    const index = this.blocks++;
    this.delivered.push(call.name, call.arguments);
    frames.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: toolUseId(call.id, this.id, this.calls++), name: call.name, input: {} } }));
    frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: call.arguments } }));
    frames.push(event('content_block_stop', { index }));
  }
}
