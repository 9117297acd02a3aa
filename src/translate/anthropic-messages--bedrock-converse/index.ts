/**
 * anthropic-messages client to Bedrock's Converse API (issue 32 item 2; the Smithy model's shapes,
 * docs/vendors/bedrock-converse.md). Request: request.ts and content.ts; answers: response.ts (JSON),
 * stream.ts (ConverseStream events, read from AWS event-stream frames), usage.ts. Chat completions and
 * responses reach Converse through this translator (openai-chat--bedrock-converse chains onto it).
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError, upstreamMessage } from '../upstream-error.js';
import { checkParams, toConverseRequest } from './request.js';
import { toMessagesAnswer } from './response.js';
import { ConverseToMessagesStream } from './stream.js';

/**
 * The client-facing error for a Bedrock error answer (`{message}`, its type in `x-amzn-errortype`,
 * e.g. `ValidationException:http://internal.amazon.com/...`): a prompt over the model's window is
 * context_length_exceeded (another model may serve it); the rest as any upstream's (a 403 is the
 * gateway's credentials: a 502, never the vendor's text).
 */
export function converseError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  const type = (headers['x-amzn-errortype'] ?? '').split(':')[0];
  const message = upstreamMessage(body);
  if (status === 400 && type === 'ValidationException' && message && /input is too long|too many input tokens|context window/i.test(message)) {
    return new GatewayError('context_length_exceeded', message);
  }
  // Bedrock's model failures have 4xx statuses of their own (ModelTimeoutException 408,
  // ModelErrorException 424): the model failed, not the client's request.
  if (status === 408) return new GatewayError('upstream_timeout', 'The upstream model did not answer in time.');
  if (status === 424) return new GatewayError('upstream_error', 'The upstream model failed while processing the request.');
  return mapUpstreamError(status, body, headers);
}

/** Creates the anthropic-messages--bedrock-converse translator for one request (parameters checked up front). */
export function createAnthropicMessagesToBedrockConverse(clientBody: Record<string, unknown>, options: TranslatorOptions): Translator {
  checkParams(clientBody);
  return {
    request: (body) => toConverseRequest(body),
    response: (upstream, clientModel) => toMessagesAnswer(upstream, clientModel, options.requestId),
    stream: (clientModel) => new ConverseToMessagesStream(clientModel, options.requestId),
    error: converseError,
  };
}
