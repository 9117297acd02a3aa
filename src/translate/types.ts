/** The translator contract (DESIGN.md "Contracts worth keeping"): one instance per request. */
import type { CompiledOffering } from '../config/types.js';
import type { GatewayError } from '../errors.js';
import type { SseEvent } from './sse.js';

/**
 * Token usage normalized across formats. `input` counts every prompt token, cached and cache-write
 * tokens included (they are subsets of it); `output` counts every generated token, reasoning included.
 */
export interface TokenUsage { input: number; output: number; cachedInput: number; cacheWrite: number; reasoning: number; }

/** What one upstream stream event turned into for the client. */
export interface StreamStep {
  /** Frames to write to the client, already in the client's SSE framing. */
  frames: string[];
  /** Set when the upstream sent an error event; the stream is over. */
  error?: GatewayError;
  /** True when the upstream signalled the normal end of the stream. */
  done?: boolean;
}

/** Per-request stream state machine. */
export interface StreamTranslator {
  push(event: SseEvent): StreamStep;
  /** Usage the upstream reported, or null when it reported none. */
  usage(): TokenUsage | null;
  /** Text delivered to the client so far (content, tool names and arguments), for counting output the upstream did not report. */
  deliveredText(): string;
}

/** Translates one request between a client format and an upstream format. */
export interface Translator {
  /** The upstream request body. */
  request(clientBody: Record<string, unknown>, offering: CompiledOffering): Record<string, unknown>;
  /** The client response body, the reported usage, and the generated text (for counting when usage is missing). */
  response(upstreamBody: Record<string, unknown>, clientModel: string): { body: Record<string, unknown>; usage: TokenUsage | null; outputText: string };
  stream(clientModel: string): StreamTranslator;
  /** The client-facing error for an upstream error answer. */
  error(status: number, upstreamBody: unknown, headers: Record<string, string>): GatewayError;
}

/** Builds a translator for one request; `clientBody` is the validated client request. */
export type TranslatorFactory = (clientBody: Record<string, unknown>) => Translator;
