/**
 * The identity chat stream: each upstream chunk reaches the client with the gateway's model id, and
 * without `usage` unless the client asked for it (the upstream is always asked, spec 4.1 rule 1); the
 * usage chunk is kept for the bill, the generated text for a bill without usage and for checkpoints.
 *
 * The usual chunk (a delta, `"usage":null` last or followed only by OpenAI's `obfuscation` padding,
 * the model the stream started with) is edited as text and not parsed: a quote inside a JSON string
 * is escaped, so `"model":"<id>"` and `,"usage":null` are keys and values, never content. When its
 * one delta is `{"content":"..."}` (the usual case) that string alone is decoded and kept, and the
 * chunk's shape becomes the stream's template (template.ts): later content chunks are matched against
 * it without a scan of their whole text. Any other usual chunk is kept whole and its text extracted
 * only when asked (deliveredText: a checkpoint, a partial answer, no usage reported), at most
 * PENDING_MAX chunks later. Any other chunk (the first, a usage or error chunk, another form) is parsed.
 * Parsing and re-serializing every chunk cost about a fifth of a stream's CPU; keeping every chunk whole
 * until the end cost an open stream about 300 bytes a token (issue 8: 1,000 open streams), against
 * the few bytes of the token's text.
 */
import type { UsageDialect } from '../../config/usage-dialect.js';
import { GatewayError } from '../../errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { upstreamMessage } from '../upstream-error.js';
import { generatedText, readChatUsage, type ChatDelta, type ChatUsage } from './chunks.js';
import { CONTENT_ONLY, ContentTemplate, NULL_USAGE, nullUsageAt, stringEnd } from './template.js';
import { DeliveredText } from '../delivered.js';

interface ChunkChoice { delta?: ChatDelta }

/** Unparsed chunks kept before their text is extracted anyway (bounds a long stream's memory). */
const PENDING_MAX = 256;

/**
 * The decoded content of a chunk whose only delta is `{"content":"..."}`, or null for any other shape
 * (no such delta, another member in it, a second delta, a malformed string). `"delta":` in the text
 * is a key: a quote inside a JSON string is escaped.
 */
export function contentOnly(data: string): string | null {
  const at = data.indexOf('"delta":');
  if (at < 0 || !data.startsWith(CONTENT_ONLY, at)) return null;
  const open = at + CONTENT_ONLY.length - 1;
  const close = stringEnd(data, open + 1);
  // The delta (the chunk's first) must end with its content, and be the chunk's only one.
  if (close < 0 || data.charCodeAt(close + 1) !== 0x7d || data.indexOf('"delta":', close) >= 0) return null;
  try {
    // A fresh string: a slice of the chunk would keep the whole chunk (and the read it came in) alive.
    return JSON.parse(data.slice(open, close + 1)) as string;
  } catch {
    return null;
  }
}

/** `"model":"<id>"` as a compact chunk writes it. */
const modelMember = (model: string): string => `"model":${JSON.stringify(model)}`;

/**
 * A compact chunk's text with its model member `from` replaced by `to` (`from` null: the chunk already
 * names the client's model) and, when asked, its `,"usage":null` removed; null when the text lacks either.
 * A chunk has one model member (a quote inside a string is escaped), so the first match is it.
 */
function editedText(data: string, from: string | null, to: string, dropNullUsage: boolean): string | null {
  let text = data;
  if (from !== null && from !== to) {
    const at = text.indexOf(from);
    if (at < 0) return null;
    text = text.slice(0, at) + to + text.slice(at + from.length);
  }
  if (dropNullUsage) {
    const at = text.lastIndexOf(NULL_USAGE);
    if (at < 0) return null;
    text = text.slice(0, at) + text.slice(at + NULL_USAGE.length);
  }
  return text;
}

/**
 * A parsed chunk as the client gets it: edited as text where it has the compact form, else
 * re-serialized from its parsed form (the gateway's model, `usage` dropped when asked).
 */
export function clientChunk(data: string, chunk: Record<string, unknown>, clientModel: string, dropUsage: boolean): string {
  const sameModel = chunk.model === clientModel;
  const editable = (sameModel || typeof chunk.model === 'string') && (!dropUsage || chunk.usage === null);
  const text = editable ? editedText(data, sameModel ? null : modelMember(chunk.model as string), modelMember(clientModel), dropUsage) : null;
  return text ?? reserialized(chunk, clientModel, dropUsage);
}

function reserialized(chunk: Record<string, unknown>, clientModel: string, dropUsage: boolean): string {
  const copy: Record<string, unknown> = { ...chunk, model: clientModel };
  if (dropUsage) delete copy.usage;
  return JSON.stringify(copy);
}

/** One stream's state. */
export class ChatStream implements StreamTranslator {
  private reported: TokenUsage | null = null;
  private readonly delivered = new DeliveredText();
  /** Chunks forwarded unparsed, in order, whose text is not in `delivered` yet. */
  private pending: string[] = [];
  /** The stream's model member as the upstream writes it, and the client's, once a chunk was parsed. */
  private models: { upstream: string; client: string } | null = null;
  /** The shape of the stream's content chunks, once one went through the general path. */
  private template: ContentTemplate | null = null;

  constructor(private readonly clientModel: string, private readonly clientWantsUsage: boolean, private readonly dialect: UsageDialect | null = null) {}

  push(event: SseEvent): StreamStep {
    if (event.data === '[DONE]') return { frames: [], done: true };
    const usual = this.template?.match(event.data);
    if (usual) {
      if (this.pending.length > 0) this.keepWhole(event.data);
      else if (usual.content) this.delivered.push(usual.content);
      return { frames: [usual.frame] };
    }
    const plain = this.plainFrame(event.data);
    if (plain !== null) {
      const content = this.pending.length === 0 ? contentOnly(event.data) : null;
      if (content !== null) {
        if (content) this.delivered.push(content);
        this.template ??= ContentTemplate.learn(event.data, this.models!.upstream, this.models!.client, !this.clientWantsUsage);
      } else {
        // Kept whole, also when its content alone could be read: text goes in `delivered` in order.
        this.keepWhole(event.data);
      }
      return { frames: [plain] };
    }
    let chunk: Record<string, unknown>;
    try { chunk = JSON.parse(event.data) as Record<string, unknown>; }
    catch { return { frames: [], error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') }; }
    if (chunk.error) return { frames: [], error: new GatewayError('upstream_error', upstreamMessage(chunk) ?? 'The upstream provider failed mid-stream.') };
    if (chunk.usage) this.reported = readChatUsage(chunk.usage as ChatUsage, this.dialect) ?? this.reported;
    if (typeof chunk.model === 'string') this.models ??= { upstream: modelMember(chunk.model), client: modelMember(this.clientModel) };
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as ChunkChoice[]) : [];
    const text: string[] = [];
    for (const choice of choices) generatedText(choice.delta, text);
    // Text after the unparsed chunks' goes after theirs; a chunk without text (the usage one) leaves them be.
    if (text.length > 0) {
      this.extract();
      this.delivered.push(...text);
    }
    const dropUsage = !this.clientWantsUsage && 'usage' in chunk;
    if (dropUsage && choices.length === 0) return { frames: [] };
    return { frames: [`data: ${clientChunk(event.data, chunk, this.clientModel, dropUsage)}\n\n`] };
  }

  usage(): TokenUsage | null { return this.reported; }

  /** The usage chunk comes last (the gateway always asks for it, spec 4.1 rule 1): with it, only `[DONE]` is missing. */
  whole(): boolean { return this.reported !== null; }

  deliveredText(): string {
    this.extract();
    return this.delivered.text();
  }

  deliveredLength(): number {
    this.extract();
    return this.delivered.length;
  }

  /**
   * The client's frame of a usual delta chunk, or null when it must be parsed: the model member seen
   * first, `"usage":null` as its last member (or before the padding alone), and no usage object or
   * error member anywhere.
   */
  private plainFrame(data: string): string | null {
    const models = this.models;
    if (!models || nullUsageAt(data) < 0 || data.includes('"usage":{') || data.includes('"error"')) return null;
    const text = editedText(data, models.upstream, models.client, !this.clientWantsUsage);
    return text === null ? null : `data: ${text}\n\n`;
  }

  /** Keeps a chunk forwarded unparsed until its text is asked for (bounded by PENDING_MAX). */
  private keepWhole(data: string): void {
    this.pending.push(data);
    if (this.pending.length >= PENDING_MAX) this.extract();
  }

  /** Adds the text of the chunks forwarded unparsed to `delivered`, in order. */
  private extract(): void {
    for (const data of this.pending) {
      try {
        const chunk = JSON.parse(data) as { choices?: ChunkChoice[] };
        for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) generatedText(choice.delta, this.delivered);
      } catch { /* forwarded as the upstream sent it; it generated nothing countable */ }
    }
    this.pending = [];
  }
}
