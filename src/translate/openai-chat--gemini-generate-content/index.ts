/**
 * openai-chat client to gemini-generate-content upstream (Google AI Studio, Vertex AI). Request:
 * request.ts (parameters), contents.ts (messages and parts). Answers: response.ts (JSON), stream.ts
 * (chunks); usage, parts and errors: ../gemini-generate-content.ts. Parameters are checked when the
 * translator is created, so an unsupported one is refused before anything is reserved or sent.
 */
import type { Translator, TranslatorOptions } from '../types.js';
import { geminiError } from '../gemini-generate-content.js';
import { checkParams, toGeminiRequest } from './request.js';
import { toChatCompletion } from './response.js';
import { GeminiToChatStream } from './stream.js';

/** Creates the openai-chat--gemini-generate-content translator for one request. */
export function createOpenaiChatToGeminiGenerateContent(clientBody: Record<string, unknown>, options: TranslatorOptions): Translator {
  checkParams(clientBody, options.offering);
  const streamOptions = clientBody.stream_options as { include_usage?: unknown } | null | undefined;
  const clientWantsUsage = streamOptions?.include_usage === true;
  return {
    request: (body, offering) => toGeminiRequest(body, offering),
    response: (upstream, clientModel) => toChatCompletion(upstream, clientModel),
    stream: (clientModel) => new GeminiToChatStream(clientModel, clientWantsUsage),
    error: geminiError,
  };
}
