/**
 * OpenAI-shaped errors shared by the chat-completions and responses routes, and the
 * chat-completions route itself (`POST /v1/chat/completions`).
 */
import { extraForbidden, streamsUsageUnasked } from './compatible.js';
import type http from 'node:http';
import { answerChat, completionBody, streamEvents, validateChatRequest } from './chat.js';
import { MALFORMED_CHAT_EVENT, type SimRoute } from './exchange.js';
import type { SimErrorCode, SimFault } from './faults.js';

type Json = Record<string, unknown>;

/** An OpenAI error body `{error: {message, type, param, code}}`. */
export function openaiError(message: string, type: string, param: string | null = null, code: string | null = null): Json {
  return { error: { message, type, param, code } };
}

/** The vendor's own bodies of fault `error_code`. */
const CODE_ERRORS: Record<SimErrorCode, Json> = {
  context_length_exceeded: openaiError(
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages.",
    'invalid_request_error', 'messages', 'context_length_exceeded'),
  content_policy_violation: openaiError('Your request was rejected as a result of our safety system.', 'invalid_request_error', null, 'content_policy_violation'),
};

/** The OpenAI-shaped error body and extra headers for a fault status (the vendor's own body for `fault.error_code`). */
export function openaiFaultResponse(status: number, _raw = '', fault: SimFault = {}): { body: Json; headers: http.OutgoingHttpHeaders } {
  if (fault.error_code) return { body: CODE_ERRORS[fault.error_code], headers: {} };
  if (status === 429) {
    return { body: openaiError('Rate limit reached (simulated).', 'rate_limit_exceeded', null, 'rate_limit_exceeded'), headers: { 'retry-after': '7' } };
  }
  if (status >= 500) return { body: openaiError(`The server had an error while processing your request (simulated ${status}).`, 'server_error'), headers: {} };
  const kinds: Record<number, [string, string | null]> = {
    401: ['authentication_error', 'invalid_api_key'], 403: ['permission_error', null], 404: ['invalid_request_error', 'model_not_found'],
  };
  const [type, code] = kinds[status] ?? ['invalid_request_error', null];
  return { body: openaiError(`Simulated error (status ${status}).`, type, null, code), headers: {} };
}

/** The 400 for a body that is not JSON. */
export const unparsableJson = (): Json => openaiError('We could not parse the JSON body of your request.', 'invalid_request_error');

const CHAT_ERROR_EVENT = `data: ${JSON.stringify({ error: { message: 'simulated upstream error', type: 'server_error', code: 'upstream_error' } })}\n\n`;

/** `POST /v1/chat/completions`. */
export const chatRoute: SimRoute = {
  faultResponse: openaiFaultResponse,
  async handle(x) {
    if (!x.parsed) return x.sendJson(400, unparsableJson());
    const valid = validateChatRequest(x.body);
    if (!valid.ok) return x.sendJson(400, openaiError(valid.error.message, 'invalid_request_error', valid.error.param, valid.error.code));
    const answer = answerChat(valid.value, x.raw, x.fault.answer_words);
    if (!answer.ok) return x.sendJson(400, openaiError(answer.error.message, 'invalid_request_error', answer.error.param, answer.error.code));
    const headers = { 'x-request-id': `req_sim_${answer.value.id.slice('chatcmpl-sim'.length)}` };
    if (valid.value.stream !== true) return x.sendJson(200, completionBody(answer.value, x.fault.omit_usage === true), headers);
    const unasked = streamsUsageUnasked(valid.value.model);
    if (unasked && valid.value.stream_options !== undefined) return x.sendJson(422, extraForbidden('stream_options'));
    const includeUsage = (unasked || valid.value.stream_options?.include_usage === true) && x.fault.omit_usage !== true;
    const obfuscate = valid.value.stream_options?.include_obfuscation !== false;
    await x.stream(streamEvents(answer.value, includeUsage, obfuscate), { error: () => CHAT_ERROR_EVENT, done: 'data: [DONE]\n\n', malformed: MALFORMED_CHAT_EVENT }, headers);
  },
};
