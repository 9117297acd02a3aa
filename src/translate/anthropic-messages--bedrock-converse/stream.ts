/**
 * ConverseStream events (parsed from AWS event-stream frames by the one parser, each given as
 * `{event: <:event-type>, data: <payload>}`) as Messages stream events, a state machine per request:
 * `messageStart` -> `message_start`; a text `contentBlockDelta` opens its text block
 * (`content_block_start`, which Bedrock does not send for text) then `text_delta`; `contentBlockStart`
 * with `toolUse` -> a `tool_use` block whose `toolUse.input` deltas are `input_json_delta`;
 * `contentBlockStop` -> `content_block_stop`. Bedrock sends its usage AFTER `messageStop`, in the
 * `metadata` event, where Anthropic puts it before `message_stop`: so `messageStop` only records the
 * stop reason, and `metadata` writes `message_delta` (stop reason and the final usage) and
 * `message_stop`. An exception frame (`exception:<type>`) ends the stream with a clean error.
 */
import { GatewayError } from '../../errors.js';
import { DeliveredText } from '../delivered.js';
import { formatSse, type SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { messageId } from './response.js';
import { converseTokenUsage, messagesStopReason, messagesUsage, readConverseUsage, type ConverseCounters } from './usage.js';

type Json = Record<string, unknown>;

/** The client-facing error for an exception frame of ConverseStream (its payload is `{message}`). */
export function converseStreamError(type: string, data: string): GatewayError {
  let message: unknown;
  try { message = (JSON.parse(data) as { message?: unknown }).message; } catch { message = undefined; }
  const text = typeof message === 'string' ? `: ${message.slice(0, 500)}` : '';
  if (/throttling/i.test(type)) return new GatewayError('upstream_error', `The upstream provider is throttling requests (${type})${text}`);
  return new GatewayError('upstream_error', `The upstream provider failed mid-stream (${type})${text}`);
}

const malformed = (): GatewayError => new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.');

/** One ConverseStream as Messages events. */
export class ConverseToMessagesStream implements StreamTranslator {
  private started = false;
  private done = false;
  private stopReason: unknown = null;
  private counters: ConverseCounters | null = null;
  /** Open content blocks, by Bedrock's contentBlockIndex (the Messages index too). */
  private readonly open = new Map<number, 'text' | 'tool_use'>();
  private readonly delivered = new DeliveredText();

  constructor(private readonly clientModel: string, private readonly requestId?: string) {}

  push(event: SseEvent): StreamStep {
    if (this.done) return { frames: [] };
    const name = event.event ?? '';
    if (name.startsWith('exception:')) {
      this.done = true;
      return { frames: [], error: converseStreamError(name.slice('exception:'.length), event.data) };
    }
    let data: Json;
    try { data = JSON.parse(event.data) as Json; } catch { return { frames: [], error: malformed() }; }
    if (!data || typeof data !== 'object') return { frames: [], error: malformed() };
    const frames: string[] = [];
    switch (name) {
      case 'messageStart': this.start(frames); break;
      case 'contentBlockStart': this.start(frames); this.blockStart(frames, data); break;
      case 'contentBlockDelta': this.start(frames); this.blockDelta(frames, data); break;
      case 'contentBlockStop': this.blockStop(frames, data.contentBlockIndex); break;
      case 'messageStop':
        this.start(frames);
        this.stopReason = data.stopReason;
        for (const index of [...this.open.keys()]) this.blockStop(frames, index);
        break;
      case 'metadata':
        return this.finish(frames, data);
      default:
        // Event types added later (e.g. guardrail traces): nothing for the client.
        break;
    }
    return { frames };
  }

  usage(): TokenUsage | null {
    return this.counters ? converseTokenUsage(this.counters) : null;
  }

  deliveredText(): string { return this.delivered.text(); }

  deliveredLength(): number { return this.delivered.length; }

  /** `message_start` once; Bedrock reports no usage before the end, so its counters are zero (the final ones come in message_delta). */
  private start(frames: string[]): void {
    if (this.started) return;
    this.started = true;
    const message = { id: messageId(this.requestId), type: 'message', role: 'assistant', model: this.clientModel, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    frames.push(this.event('message_start', { message }));
  }

  private blockStart(frames: string[], data: Json): void {
    const index = data.contentBlockIndex;
    const use = (data.start as { toolUse?: { toolUseId?: unknown; name?: unknown } } | undefined)?.toolUse;
    if (typeof index !== 'number' || !use || typeof use.name !== 'string' || this.open.has(index)) return;
    this.open.set(index, 'tool_use');
    this.delivered.push(use.name);
    frames.push(this.event('content_block_start', { index, content_block: { type: 'tool_use', id: use.toolUseId, name: use.name, input: {} } }));
  }

  private blockDelta(frames: string[], data: Json): void {
    const index = data.contentBlockIndex;
    const delta = data.delta as { text?: unknown; toolUse?: { input?: unknown } } | undefined;
    if (typeof index !== 'number' || !delta) return;
    if (typeof delta.text === 'string') {
      if (!this.open.has(index)) {
        this.open.set(index, 'text');
        frames.push(this.event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      }
      if (delta.text === '') return;
      this.delivered.push(delta.text);
      frames.push(this.event('content_block_delta', { index, delta: { type: 'text_delta', text: delta.text } }));
    } else if (typeof delta.toolUse?.input === 'string' && delta.toolUse.input !== '' && this.open.get(index) === 'tool_use') {
      this.delivered.push(delta.toolUse.input);
      frames.push(this.event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: delta.toolUse.input } }));
    }
    // reasoningContent and citation deltas: never asked for by this translator.
  }

  private blockStop(frames: string[], index: unknown): void {
    if (typeof index !== 'number' || !this.open.has(index)) return;
    this.open.delete(index);
    frames.push(this.event('content_block_stop', { index }));
  }

  /** The `metadata` event: the final usage, then the stream's end. */
  private finish(frames: string[], data: Json): StreamStep {
    this.start(frames);
    for (const index of [...this.open.keys()]) this.blockStop(frames, index);
    this.counters = readConverseUsage(data.usage);
    const usage = this.counters ? messagesUsage(this.counters) : { output_tokens: 0 };
    frames.push(this.event('message_delta', { delta: { stop_reason: messagesStopReason(this.stopReason), stop_sequence: null }, usage }));
    frames.push(this.event('message_stop', {}));
    this.done = true;
    return { frames, done: true };
  }

  private event(type: string, body: Json): string {
    return formatSse(JSON.stringify({ type, ...body }), type);
  }
}
