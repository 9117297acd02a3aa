/** A client wire format: how errors and streams look to that client, and how to size a request in tokens. */
import type { GatewayError } from '../errors.js';
import type { UsageCostPlaces } from './usage-cost.js';

/** One client format (src/formats/<id>/). */
export interface ClientFormat {
  readonly id: string;
  /** The JSON error body in this format's shape. */
  errorBody(error: GatewayError): Record<string, unknown>;
  /** An error as a stream frame, for failures after the stream started. */
  streamErrorFrame(error: GatewayError): string;
  /** The frame that ends a successful stream, if the format has one. */
  streamDoneFrame: string | null;
  /** The header this format's clients send to opt into beta features (spec 9: not used), or null. */
  readonly betaHeader: string | null;
  /** How a request of this format is sized in tokens; null for formats no token meter serves. */
  tokens: TokenReader | null;
  /** Where answers and streams of this format carry their final usage, for `usage.cost` (issue 31 item 12); null: they say it in no body. */
  usageCost: UsageCostPlaces | null;
}

/** How the token meter reads a request of one format (src/meters/token-meter.ts). */
export interface TokenReader {
  /** Tokenizer estimate of the request's input tokens (reservation, and billing when usage is missing). */
  estimateInputTokens(body: Record<string, unknown>): number;
  /** The field the input is sent in (`messages`, `input`), named as the `param` of a request too large for any token limit. */
  readonly inputParam: string | null;
  /** The output cap the client asked for, or null. */
  requestedMaxOutput(body: Record<string, unknown>): number | null;
  /** The client's own name for its output cap in this body (in errors' `param` and messages). */
  maxOutputParam(body: Record<string, unknown>): string;
  /** Billable built-in tools the request enables, with the most calls each can make (for the reservation). */
  billableTools(body: Record<string, unknown>): Record<string, number>;
  /**
   * How many answers the request asks for, each up to the output cap (chat completions' `n`); absent: one.
   * The reservation covers every one of them.
   */
  answerCount?(body: Record<string, unknown>): number;
}
