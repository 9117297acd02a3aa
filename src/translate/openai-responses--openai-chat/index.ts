/**
 * openai-responses client to openai-chat upstream (spec 4.2 rule 2): a Responses API request
 * (`POST /v1/responses`, as the official SDKs send it) served by a chat-completions-only model.
 * Function and custom tools translate; built-in tools are refused (`tool_not_available` for
 * code_interpreter, image_generation and file_search, `unsupported_responses_tools` for the rest);
 * parameters chat completions cannot carry are refused with `unsupported_parameter` (request.ts
 * lists each one). Answers and streams come back in Responses shape with normalized usage.
 */
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';
import { nowSeconds } from './envelope.js';
import { buildChatRequest } from './request.js';
import { translateResponse } from './response.js';
import { ResponsesStream } from './stream.js';

/** Creates the openai-responses--openai-chat translator for one request. */
export function createOpenaiResponsesToOpenaiChat(clientBody: Record<string, unknown>, options: TranslatorOptions): Translator {
  // The Response is created when the gateway receives the request.
  const createdAt = nowSeconds();
  // Built up front so every refusal (parameters, built-in tools) is a 400 before anything is reserved.
  const chatBody = buildChatRequest(clientBody);
  const dialect = options.usage ?? null;
  // A vendor that reports stream usage unasked refuses stream_options (issue 32: `stream: always`).
  if (dialect?.stream === 'always') delete chatBody.stream_options;
  return {
    request: (_body, offering) => ({ ...chatBody, model: offering.upstreamModel }),
    response: (upstream, clientModel) => translateResponse(upstream, { client: clientBody, createdAt, clientModel, requestId: options.requestId, dialect }),
    stream: (clientModel) => new ResponsesStream(clientBody, clientModel, createdAt, options.requestId, dialect),
    error: mapUpstreamError,
  };
}
