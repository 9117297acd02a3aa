/** A client wire format: how errors and streams look to that client, and how to size a request. */
import type { GatewayError } from '../errors.js';

/** One client format (src/formats/<id>/). */
export interface ClientFormat {
  readonly id: string;
  /** The JSON error body in this format's shape. */
  errorBody(error: GatewayError): Record<string, unknown>;
  /** An error as a stream frame, for failures after the stream started. */
  streamErrorFrame(error: GatewayError): string;
  /** The frame that ends a successful stream, if the format has one. */
  streamDoneFrame: string | null;
  /** Tokenizer estimate of the request's input tokens (reservation, and billing when usage is missing). */
  estimateInputTokens(body: Record<string, unknown>): number;
  /** The output cap the client asked for, or null. */
  requestedMaxOutput(body: Record<string, unknown>): number | null;
  /** Billable built-in tools the request enables, with the most calls each can make (for the reservation). */
  billableTools(body: Record<string, unknown>): Record<string, number>;
}
