/**
 * Messages stream events as `chat.completion.chunk` frames: a state machine per request.
 * `message_start` opens the answer (role chunk); text deltas become `delta.content`; each `tool_use`
 * block becomes a tool call numbered from 0, its `input_json_delta` fragments its arguments (empty
 * fragments are skipped); `message_delta` carries the finish reason and CUMULATIVE usage (the latest
 * value wins, never a sum); `message_stop` ends the stream, after the usage chunk when the client
 * asked for it. Events arriving before `message_start` open the answer instead of failing.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { upstreamMessage } from '../upstream-error.js';
import { JSON_OBJECT_TOOL } from './response-format.js';
import { nowSeconds } from './response.js';
import { type AnthropicUsage, applyUsage, chatUsage, emptyCounters, finishReason, tokenUsage } from './usage.js';
import { DeliveredText } from '../delivered.js';

interface StreamBlock { type?: string; text?: string; id?: string; name?: string; input?: unknown }
interface StreamDelta { type?: string; text?: string; partial_json?: string; stop_reason?: unknown }
interface StreamEvent {
  type?: string;
  index?: number;
  message?: { id?: unknown; usage?: AnthropicUsage };
  content_block?: StreamBlock;
  delta?: StreamDelta;
  usage?: AnthropicUsage;
  error?: { type?: unknown; message?: unknown };
}

/** The client-facing error for an upstream `error` event. */
export function streamError(data: StreamEvent): GatewayError {
  if (data.error?.type === 'overloaded_error') return new GatewayError('upstream_error', 'The upstream provider is overloaded.');
  return new GatewayError('upstream_error', upstreamMessage(data) ?? 'The upstream provider failed mid-stream.');
}

export class AnthropicToChatStream implements StreamTranslator {
  private readonly created = nowSeconds();
  private id = '';
  private started = false;
  private usageSeen = false;
  private finished = false;
  private done = false;
  private readonly counters = emptyCounters();
  /** Content block index -> tool call number, for `tool_use` blocks. */
  private readonly tools = new Map<number, number>();
  /** Content block indexes of the json_object tool (response-format.ts): their input streams as content. */
  private readonly jsonBlocks = new Set<number>();
  private readonly delivered = new DeliveredText();
  /** The serialized fields every chunk starts with, once the answer's id is known (frame). */
  private head = '';

  /** `jsonObject`: the client asked for response_format json_object (the forced tool's input is the content). */
  constructor(private readonly clientModel: string, private readonly clientWantsUsage: boolean, private readonly jsonObject = false) {}

  push(event: SseEvent): StreamStep {
    if (this.done) return { frames: [] };
    let data: StreamEvent;
    try { data = JSON.parse(event.data) as StreamEvent; }
    catch { return { frames: [], error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') }; }
    if (!data || typeof data !== 'object') return { frames: [], error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') };
    const frames: string[] = [];
    switch (data.type ?? event.event) {
      case 'message_start':
        if (!this.started) this.start(frames, data.message?.id);
        if (!this.usageSeen) {
          applyUsage(this.counters, data.message?.usage);
          this.usageSeen = true;
        }
        break;
      case 'content_block_start':
        this.start(frames);
        this.blockStart(frames, data.index, data.content_block);
        break;
      case 'content_block_delta':
        this.start(frames);
        this.blockDelta(frames, data.index, data.delta);
        break;
      case 'message_delta':
        this.start(frames);
        // Cumulative counters; a delta that reports input tokens is real usage even without message_start.
        if (applyUsage(this.counters, data.usage)) this.usageSeen = true;
        if (data.delta?.stop_reason) this.finish(frames, data.delta.stop_reason);
        break;
      case 'message_stop':
        this.start(frames);
        this.finish(frames, 'end_turn');
        if (this.clientWantsUsage && this.usageSeen) frames.push(this.frame([], chatUsage(this.counters)));
        this.done = true;
        return { frames, done: true };
      case 'error':
        this.done = true;
        return { frames: [], error: streamError(data) };
      default:
        // ping, content_block_stop, and event types added later: nothing for the client.
        break;
    }
    return { frames };
  }

  usage(): TokenUsage | null {
    return this.usageSeen ? tokenUsage(this.counters) : null;
  }

  deliveredText(): string {
    return this.delivered.text();
  }

  deliveredLength(): number { return this.delivered.length; }

  /** The answer finished (a stop reason) with its usage: only `message_stop` is missing (issue 29, S11). */
  whole(): boolean {
    return this.finished && this.usageSeen;
  }

  /** Opens the answer once: the role chunk. Without `message_start`, the id is made up. */
  private start(frames: string[], id?: unknown): void {
    if (this.started) return;
    this.started = true;
    this.id = typeof id === 'string' && id !== '' ? id : `chatcmpl-${randomUUID().replaceAll('-', '')}`;
    frames.push(this.chunk({ role: 'assistant', content: '' }));
  }

  private blockStart(frames: string[], index: number | undefined, block: StreamBlock | undefined): void {
    if (!block || typeof index !== 'number') return;
    if (block.type === 'text' && block.text) this.text(frames, block.text);
    if (this.jsonObject && block.type === 'tool_use' && block.name === JSON_OBJECT_TOOL) {
      this.jsonBlocks.add(index);
      if (block.input && typeof block.input === 'object' && Object.keys(block.input).length > 0) this.text(frames, JSON.stringify(block.input));
      return;
    }
    if (block.type !== 'tool_use' || typeof block.name !== 'string' || this.tools.has(index)) return;
    const k = this.tools.size;
    this.tools.set(index, k);
    // Streams announce `input: {}` and send the arguments as deltas; an input given up front is sent whole.
    const input = block.input && typeof block.input === 'object' && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    this.delivered.push(block.name, input);
    frames.push(this.chunk({ tool_calls: [{ index: k, id: block.id, type: 'function', function: { name: block.name, arguments: input } }] }));
  }

  private blockDelta(frames: string[], index: number | undefined, delta: StreamDelta | undefined): void {
    // thinking and signature deltas: never requested by this translator, ignored like unknown ones.
    if (!delta) return;
    if (delta.type === 'text_delta' && delta.text) this.text(frames, delta.text);
    if (delta.type !== 'input_json_delta' || !delta.partial_json) return;
    if (typeof index === 'number' && this.jsonBlocks.has(index)) return this.text(frames, delta.partial_json);
    const k = typeof index === 'number' ? this.tools.get(index) : undefined;
    if (k === undefined) return;
    this.delivered.push(delta.partial_json);
    frames.push(this.chunk({ tool_calls: [{ index: k, function: { arguments: delta.partial_json } }] }));
  }

  private text(frames: string[], text: string): void {
    this.delivered.push(text);
    frames.push(this.chunk({ content: text }));
  }

  private finish(frames: string[], stopReason: unknown): void {
    if (this.finished) return;
    this.finished = true;
    frames.push(this.chunk({}, finishReason(this.jsonObject && stopReason === 'tool_use' ? 'end_turn' : stopReason)));
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return this.frame([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  }

  /**
   * One chunk: {id, object, created, model, choices[, usage]}. The fields before `choices` are the
   * same in every chunk of the stream, so they are serialized once (`head`), not once per event.
   */
  private frame(choices: unknown[], usage: Record<string, unknown> | null = null): string {
    this.head ||= `{"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.clientModel)},"choices":`;
    // Like the OpenAI API: with include_usage every chunk has `usage` (null until the last one).
    const tail = this.clientWantsUsage ? `,"usage":${JSON.stringify(usage)}}` : '}';
    return `data: ${this.head}${JSON.stringify(choices)}${tail}\n\n`;
  }
}
