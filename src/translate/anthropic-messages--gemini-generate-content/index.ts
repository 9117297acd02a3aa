/**
 * anthropic-messages client to gemini-generate-content upstream (Google AI Studio, Vertex AI).
 * Request: request.ts (parameters), contents.ts (system, messages and blocks). Answers: response.ts
 * (JSON), stream.ts (events); usage, parts and errors: ../gemini-generate-content.ts. Parameters are
 * checked when the translator is created, so an unsupported one is refused before anything is reserved.
 */
import type { Translator, TranslatorOptions } from '../types.js';
import { geminiError } from '../gemini-generate-content.js';
import { checkParams, toGeminiRequest } from './request.js';
import { toMessage } from './response.js';
import { GeminiToMessagesStream } from './stream.js';

/** Creates the anthropic-messages--gemini-generate-content translator for one request. */
export function createAnthropicMessagesToGeminiGenerateContent(clientBody: Record<string, unknown>, options: TranslatorOptions): Translator {
  checkParams(clientBody, options.offering);
  return {
    request: (body, offering) => toGeminiRequest(body, offering),
    response: (upstream, clientModel) => toMessage(upstream, clientModel),
    stream: (clientModel) => new GeminiToMessagesStream(clientModel),
    error: geminiError,
  };
}
