/**
 * Chat completion chunks -> the Responses event stream: `response.created`, `response.in_progress`,
 * then per output item `output_item.added`, its deltas and `...done` events, `output_item.done`,
 * and finally `response.completed` (or `response.incomplete`) carrying the same Response a JSON
 * answer would, usage included. Each frame is `event: <type>` plus `data:` with `type` and a
 * `sequence_number` counting from 0. An item is closed when the next one starts or when the
 * upstream gives its finish reason; the final Response is sent on the upstream's `[DONE]`, after
 * its usage chunk.
 */
import type { UsageDialect } from '../../config/usage-dialect.js';
import { responsesErrorFrame } from '../../formats/openai-responses/index.js';
import { GatewayError } from '../../errors.js';
import { readChatUsage } from '../openai-chat--openai-chat/chunks.js';
import { formatSse, type SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { upstreamMessage } from '../upstream-error.js';
import { isObject, type Json } from './common.js';
import { DeliveredText } from '../delivered.js';
import {
  buildResponse, finishStatus, Ids, messageItem, partJson, responsesUsage, toolItem,
  type ItemStatus, type MessagePart, type ToolCall,
} from './envelope.js';

interface MessageState { kind: 'message'; outputIndex: number; id: string; parts: MessagePart[]; partOpen: boolean; status: ItemStatus }
interface ToolState { kind: 'tool'; outputIndex: number; call: ToolCall; status: ItemStatus }
type ItemState = MessageState | ToolState;

function itemJson(item: ItemState): Json {
  return item.kind === 'message' ? messageItem(item.id, item.parts, item.status) : toolItem(item.call, item.status);
}

/** Per-request state machine of the openai-responses--openai-chat stream. */
export class ResponsesStream implements StreamTranslator {
  private frames: string[] = [];
  private sequence = 0;
  private ids: Ids | null = null;
  private serviceTier: unknown;
  private readonly items: ItemState[] = [];
  private readonly tools = new Map<number, ToolState>();
  private open: ItemState | null = null;
  private messages = 0;
  private finishReason: unknown = null;
  private reported: TokenUsage | null = null;
  private upstreamUsage: unknown = null;
  private readonly delivered = new DeliveredText();

  constructor(private readonly client: Json, private readonly model: string, private readonly createdAt: number, private readonly requestId?: string, private readonly dialect: UsageDialect | null = null) {}

  push(event: SseEvent): StreamStep {
    this.frames = [];
    if (event.data === '[DONE]') {
      this.start({});
      this.complete();
      return { frames: this.frames, done: true };
    }
    let chunk: unknown;
    try { chunk = JSON.parse(event.data); } catch { chunk = null; }
    if (!isObject(chunk)) return { frames: [], error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') };
    if (chunk.error) return { frames: [], error: new GatewayError('upstream_error', upstreamMessage(chunk) ?? 'The upstream provider failed mid-stream.') };
    this.start(chunk);
    const choices = Array.isArray(chunk.choices) ? chunk.choices.filter(isObject) : [];
    for (const choice of choices) if ((choice.index ?? 0) === 0) this.choice(choice);
    if (isObject(chunk.usage)) {
      this.reported = readChatUsage(chunk.usage as Parameters<typeof readChatUsage>[0], this.dialect) ?? this.reported;
      this.upstreamUsage = chunk.usage;
    }
    return { frames: this.frames };
  }

  usage(): TokenUsage | null { return this.reported; }
  deliveredText(): string { return this.delivered.text(); }
  deliveredLength(): number { return this.delivered.length; }
  errorFrame(error: GatewayError): string { return responsesErrorFrame(error, this.sequence); }

  private emit(type: string, payload: Json): void {
    this.frames.push(formatSse(JSON.stringify({ type, ...payload, sequence_number: this.sequence++ }), type));
  }

  private snapshot(status: 'in_progress' | 'completed' | 'incomplete', incomplete: string | null, usage: Json | null): Json {
    const output = status === 'in_progress' ? [] : this.items.map(itemJson);
    return buildResponse(this.client, { id: this.ids!.response, createdAt: this.createdAt, model: this.model, status, incomplete, output, usage, serviceTier: this.serviceTier });
  }

  /** Opens the Response at the first upstream event. */
  private start(chunk: Json): void {
    if (this.ids) return;
    this.ids = new Ids(chunk.id, this.requestId);
    this.serviceTier = chunk.service_tier;
    this.emit('response.created', { response: this.snapshot('in_progress', null, null) });
    this.emit('response.in_progress', { response: this.snapshot('in_progress', null, null) });
  }

  private choice(choice: Json): void {
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content !== '') this.text('output_text', delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') this.text('refusal', delta.refusal);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isObject(call)) this.tool(call);
    if (typeof choice.finish_reason === 'string') {
      this.finishReason = choice.finish_reason;
      this.closeOpen(finishStatus(choice.finish_reason).status === 'incomplete' ? 'incomplete' : 'completed');
    }
  }

  /** Text or refusal content: into the open message item, or a new one. */
  private text(kind: MessagePart['type'], delta: string): void {
    let message = this.open?.kind === 'message' ? this.open : null;
    if (!message) {
      this.closeOpen('completed');
      message = { kind: 'message', outputIndex: this.items.length, id: this.ids!.message(this.messages++), parts: [], partOpen: false, status: 'in_progress' };
      this.items.push(message);
      this.open = message;
      this.emit('response.output_item.added', { output_index: message.outputIndex, item: messageItem(message.id, [], 'in_progress') });
    }
    const current = message.partOpen ? message.parts[message.parts.length - 1] : undefined;
    if (!current || current.type !== kind) {
      this.closePart(message);
      const fresh = { type: kind, text: '' } as MessagePart;
      message.parts.push(fresh);
      message.partOpen = true;
      this.emit('response.content_part.added', { ...this.where(message), part: partJson(fresh) });
    }
    message.parts[message.parts.length - 1]!.text += delta;
    this.delivered.push(delta);
    if (kind === 'output_text') this.emit('response.output_text.delta', { ...this.where(message), delta, logprobs: [] });
    else this.emit('response.refusal.delta', { ...this.where(message), delta });
  }

  /** A tool-call fragment: opens the call's item at its first fragment. */
  private tool(fragment: Json): void {
    const index = typeof fragment.index === 'number' ? fragment.index : 0;
    let state = this.tools.get(index);
    const custom = state ? state.call.custom : fragment.type === 'custom' || isObject(fragment.custom);
    const body = (custom ? fragment.custom : fragment.function) as { name?: unknown; arguments?: unknown; input?: unknown } | undefined;
    const name = typeof body?.name === 'string' ? body.name : '';
    if (!state) {
      this.closeOpen('completed');
      const callId = typeof fragment.id === 'string' ? fragment.id : this.ids!.callId(index);
      state = { kind: 'tool', outputIndex: this.items.length, call: { custom, id: this.ids!.call(index, custom), callId, name, args: '' }, status: 'in_progress' };
      this.items.push(state);
      this.tools.set(index, state);
      this.open = state;
      this.delivered.push(name);
      this.emit('response.output_item.added', { output_index: state.outputIndex, item: toolItem(state.call, 'in_progress') });
    } else if (state.call.name === '' && name !== '') {
      state.call.name = name; // a name sent after the first fragment; repeated names are not appended
      this.delivered.push(name);
    }
    const piece = custom ? body?.input : body?.arguments;
    if (typeof piece !== 'string' || piece === '') return;
    state.call.args += piece;
    this.delivered.push(piece);
    const type = custom ? 'response.custom_tool_call_input.delta' : 'response.function_call_arguments.delta';
    this.emit(type, { item_id: state.call.id, output_index: state.outputIndex, delta: piece });
  }

  private where(message: MessageState): Json {
    return { item_id: message.id, output_index: message.outputIndex, content_index: message.parts.length - 1 };
  }

  private closePart(message: MessageState): void {
    const part = message.parts[message.parts.length - 1];
    if (!message.partOpen || !part) return;
    message.partOpen = false;
    if (part.type === 'output_text') this.emit('response.output_text.done', { ...this.where(message), text: part.text, logprobs: [] });
    else this.emit('response.refusal.done', { ...this.where(message), refusal: part.text });
    this.emit('response.content_part.done', { ...this.where(message), part: partJson(part) });
  }

  private closeOpen(status: ItemStatus): void {
    const item = this.open;
    if (!item) return;
    this.open = null;
    item.status = status;
    if (item.kind === 'message') {
      this.closePart(item);
    } else if (item.call.custom) {
      this.emit('response.custom_tool_call_input.done', { item_id: item.call.id, output_index: item.outputIndex, input: item.call.args });
    } else {
      this.emit('response.function_call_arguments.done', { item_id: item.call.id, output_index: item.outputIndex, name: item.call.name, arguments: item.call.args });
    }
    this.emit('response.output_item.done', { output_index: item.outputIndex, item: itemJson(item) });
  }

  /** The end of the upstream stream: the final Response. */
  private complete(): void {
    const { status, incomplete } = finishStatus(this.finishReason);
    this.closeOpen(status === 'incomplete' ? 'incomplete' : 'completed');
    const response = this.snapshot(status, incomplete, responsesUsage(this.reported, this.upstreamUsage));
    this.emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  }
}
