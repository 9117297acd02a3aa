/**
 * Gemini stream chunks (`alt=sse`: each `data:` a GenerateContentResponse holding what is new) as
 * `chat.completion.chunk` frames: a state machine per request. The first chunk opens the answer (role
 * chunk); text parts become `delta.content` (thought summaries are left out); each `functionCall` part
 * (the vendor sends a call whole, in one chunk) becomes one tool call numbered from 0 with all its
 * arguments; `usageMetadata` is repeated in every chunk, each time the figures so far, so the latest
 * wins, never a sum. The vendor has no terminator: the chunk with a finish reason ends the answer
 * (finish chunk, then the usage chunk when the client asked for it).
 */
import { DeliveredText } from '../delivered.js';
import type { SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { candidateParts, firstCandidate, geminiStop, geminiTokenUsage, parseChunk, partCall, partText, promptBlocked, responseIdOf } from '../gemini-generate-content.js';
import { callId, chatUsage, completionId, nowSeconds } from './response.js';

export class GeminiToChatStream implements StreamTranslator {
  private readonly created = nowSeconds();
  private id = '';
  private started = false;
  private done = false;
  private calls = 0;
  private latest: TokenUsage | null = null;
  private readonly delivered = new DeliveredText();
  private head = '';

  constructor(private readonly clientModel: string, private readonly clientWantsUsage: boolean) {}

  push(event: SseEvent): StreamStep {
    if (this.done) return { frames: [] };
    const parsed = parseChunk(event.data);
    if ('error' in parsed) {
      this.done = true;
      return { frames: [], error: parsed.error };
    }
    const chunk = parsed.chunk;
    const frames: string[] = [];
    if (!this.started) {
      this.started = true;
      this.id = completionId(chunk);
      frames.push(this.chunk({ role: 'assistant', content: '' }));
    }
    this.latest = geminiTokenUsage(chunk.usageMetadata) ?? this.latest;
    const candidate = firstCandidate(chunk);
    for (const part of candidateParts(candidate)) {
      const text = partText(part);
      if (text) {
        this.delivered.push(text);
        frames.push(this.chunk({ content: text }));
      }
      const call = partCall(part);
      if (call) {
        const k = this.calls++;
        this.delivered.push(call.name, call.arguments);
        const id = callId(call.id, responseIdOf(chunk) ?? this.id.slice(9), k);
        frames.push(this.chunk({ tool_calls: [{ index: k, id, type: 'function', function: { name: call.name, arguments: call.arguments } }] }));
      }
    }
    const blocked = promptBlocked(chunk);
    if (candidate?.finishReason === undefined && !blocked) return { frames };
    frames.push(this.chunk({}, blocked ? 'content_filter' : geminiStop(candidate!.finishReason, this.calls > 0)));
    if (this.clientWantsUsage && this.latest) frames.push(this.frame([], chatUsage(this.latest)));
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

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return this.frame([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  }

  /** One chunk: {id, object, created, model, choices[, usage]}; the fields before `choices` serialized once. */
  private frame(choices: unknown[], usage: Record<string, unknown> | null = null): string {
    this.head ||= `{"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.clientModel)},"choices":`;
    // Like the OpenAI API: with include_usage every chunk has `usage` (null until the last one).
    const tail = this.clientWantsUsage ? `,"usage":${JSON.stringify(usage)}}` : '}';
    return `data: ${this.head}${JSON.stringify(choices)}${tail}\n\n`;
  }
}
