/** The chat-completions client format (spec 4.1): `{error:{message,type,code,param}}`, `data:` SSE ending in `[DONE]`. */
import type { ErrorKind, GatewayError } from '../../errors.js';
import { countChatPromptTokens } from '../../tokenize.js';
import { formatSse } from '../../translate/sse.js';
import type { ClientFormat } from '../types.js';
import type { UsageCostPlaces } from '../usage-cost.js';

const ERROR_TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  payment: 'insufficient_balance',
  not_found: 'not_found_error',
  rate_limit: 'rate_limit_error',
  upstream: 'server_error',
  timeout: 'server_error',
  internal: 'server_error',
  too_large: 'invalid_request_error',
  unavailable: 'server_error',
  conflict: 'conflict_error',
  permission: 'permission_error',
};

function errorBody(error: GatewayError): Record<string, unknown> {
  return { error: { message: error.message, type: ERROR_TYPES[error.kind], code: error.code, param: error.extra.param ?? null } };
}

/** `usage` as a member name of a chunk's JSON (inside a string value its quotes would be escaped). */
const USAGE_MEMBER = '"usage"';
/** What follows the member name when its value is an object, read from where the name ends. */
const OBJECT_VALUE = /\s*:\s*\{/y;

/**
 * True for a `data:` chunk whose `usage` is an object: the final usage chunk (every other chunk has
 * `usage: null` or none). Found with indexOf, then a sticky match where the name ends: a regular
 * expression over the whole frame (`^data: .*"usage"...`) backtracked through every frame, about 3%
 * of a stream's CPU in a closed-loop profile (2026-12-04).
 */
export function isUsageChunk(frame: string): boolean {
  if (!frame.startsWith('data: ')) return false;
  for (let at = frame.indexOf(USAGE_MEMBER); at >= 0; at = frame.indexOf(USAGE_MEMBER, at + USAGE_MEMBER.length)) {
    OBJECT_VALUE.lastIndex = at + USAGE_MEMBER.length;
    if (OBJECT_VALUE.test(frame)) return true;
  }
  return false;
}

/** `usage.cost` in the completion's `usage` and in the final usage chunk of a stream (OpenRouter's place for it). */
export const chatUsageCost: UsageCostPlaces = { answer: ['usage'], frame: (frame) => (isUsageChunk(frame) ? ['usage'] : null) };

/** The openai-chat client format. */
export const openaiChatFormat: ClientFormat = {
  id: 'openai-chat',
  errorBody,
  // The official SDKs raise an APIError for a `data:` event that carries an `error` object.
  streamErrorFrame: (error) => formatSse(JSON.stringify(errorBody(error))),
  streamDoneFrame: 'data: [DONE]\n\n',
  betaHeader: null,
  usageCost: chatUsageCost,
  tokens: {
    estimateInputTokens: (body) => countChatPromptTokens(body.messages as unknown[], body.tools as unknown[] | undefined),
    inputParam: 'messages',
    requestedMaxOutput: (body) => {
      const value = body.max_completion_tokens ?? body.max_tokens;
      return typeof value === 'number' ? value : null;
    },
    // The newer name when the client sent it (it wins over max_tokens above), else the older one.
    maxOutputParam: (body) => (typeof body.max_completion_tokens === 'number' ? 'max_completion_tokens' : 'max_tokens'),
    // Chat completions have no built-in tools with a per-call meter.
    billableTools: () => ({}),
    // `n` choices, each up to the output cap: the vendor bills the output of all of them.
    answerCount: (body) => (typeof body.n === 'number' && Number.isSafeInteger(body.n) && body.n > 1 ? body.n : 1),
  },
};
