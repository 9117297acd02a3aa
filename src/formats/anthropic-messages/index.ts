/**
 * The messages client format (spec 4.4): errors as `{type:"error", error:{type, message}}` (plus the
 * gateway's stable `code`), named stream events ending with `message_stop`, and no `[DONE]`.
 */
import type { ErrorKind, GatewayError } from '../../errors.js';
import { countMessagesPromptTokens } from '../../tokenize.js';
import { formatSse } from '../../translate/sse.js';
import { DEFAULT_TOOL_CALL_CAP } from '../openai-responses/index.js';
import type { ClientFormat } from '../types.js';
import { namedEventFrame } from '../usage-cost.js';

// The vendor's error type vocabulary.
const ERROR_TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  payment: 'billing_error',
  not_found: 'not_found_error',
  rate_limit: 'rate_limit_error',
  upstream: 'api_error',
  timeout: 'timeout_error',
  internal: 'api_error',
  too_large: 'request_too_large',
  unavailable: 'api_error',
  // The vendor has no conflict type of its own; invalid_request_error is what it answers for a reused id.
  conflict: 'invalid_request_error',
  permission: 'permission_error',
};

function errorBody(error: GatewayError): Record<string, unknown> {
  return { type: 'error', error: { type: ERROR_TYPES[error.kind], message: error.message, code: error.code } };
}

/** The messages client format. */
export const anthropicMessagesFormat: ClientFormat = {
  id: 'anthropic-messages',
  errorBody,
  streamErrorFrame: (error) => formatSse(JSON.stringify(errorBody(error)), 'error'),
  streamDoneFrame: null,
  betaHeader: 'anthropic-beta',
  // The message's `usage`; streamed, `message_delta`'s usage (cumulative, the final figures: the vendor's last word on usage).
  usageCost: { answer: ['usage'], frame: namedEventFrame(new Set(['message_delta']), ['usage']) },
  tokens: {
    estimateInputTokens: countMessagesPromptTokens,
    inputParam: 'messages',
    requestedMaxOutput: (body) => (typeof body.max_tokens === 'number' ? body.max_tokens : null),
    maxOutputParam: () => 'max_tokens',
    billableTools: (body): Record<string, number> => {
      const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: unknown; max_uses?: unknown }>) : [];
      const search = tools.filter((t) => typeof t?.type === 'string' && t.type.startsWith('web_search_'));
      if (search.length === 0) return {};
      return { web_search: search.reduce((n, t) => n + (typeof t.max_uses === 'number' ? t.max_uses : DEFAULT_TOOL_CALL_CAP), 0) };
    },
  },
};
