/**
 * The Anthropic routes of the simulator: `POST /v1/messages` (JSON or stream, with faults) and
 * `POST /v1/messages/count_tokens`, Anthropic-shaped errors, and the prompt-cache memory that turns
 * the first `cache_control` request for a system text into a cache write and later ones into reads.
 */
import type http from 'node:http';
import type { Exchange, SimRoute } from './exchange.js';
import type { SimErrorCode, SimFault } from './faults.js';
import { answerMessages, countMessagesInputTokens, validateMessagesRequest, type MessagesAnswer, type SimMessagesRequest } from './messages.js';
import { MESSAGES_ERROR_EVENT, MESSAGES_MALFORMED_EVENT, messageBody, messagesStreamEvents, messagesUsage, type CacheSplit } from './messages-stream.js';
import { bodyHash } from './text.js';

/** Error types by status, as the Anthropic API reports them. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error',
  404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 529: 'overloaded_error',
};
const ERROR_MESSAGES: Record<string, string> = {
  rate_limit_error: 'Rate limited (simulated).', overloaded_error: 'Overloaded', api_error: 'Internal server error (simulated).',
};

const requestId = (raw: string) => `req_sim${bodyHash(raw).slice(0, 24)}`;

/** An Anthropic error body `{type: "error", error: {type, message}, request_id}`. */
export function anthropicError(type: string, message: string, raw: string): Record<string, unknown> {
  return { type: 'error', error: { type, message }, request_id: requestId(raw) };
}

/** The vendor's own messages of fault `error_code` (an invalid_request_error). */
const CODE_MESSAGES: Record<SimErrorCode, string> = {
  context_length_exceeded: 'prompt is too long: 250000 tokens > 200000 maximum',
  content_policy_violation: 'Output blocked by content filtering policy',
};

/** The 400 message of fault reject_prefill. */
const PREFILL_REFUSED = 'This model does not support assistant message prefill. The conversation must end with a user message.';

/**
 * The Anthropic-shaped error body and headers for a fault status (429 carries retry-after: 7); with
 * `fault.error_code` the vendor's own invalid_request_error for it.
 */
export function anthropicFaultResponse(status: number, raw: string, fault: SimFault = {}): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const headers: http.OutgoingHttpHeaders = { 'request-id': requestId(raw), ...(status === 429 ? { 'retry-after': '7' } : {}) };
  if (fault.error_code) return { body: anthropicError('invalid_request_error', CODE_MESSAGES[fault.error_code], raw), headers };
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  const message = ERROR_MESSAGES[type] ?? `Simulated error (status ${status}).`;
  return { body: anthropicError(type, message, raw), headers };
}

/** Remembers which system texts were cached (insertion order, bounded). */
class PromptCache {
  private readonly keys = new Set<string>();
  constructor(private readonly maxEntries = 1024) {}

  /** The cache split of an answer: none without cache_control, else half written (first time) or read. */
  split(a: MessagesAnswer): CacheSplit {
    if (!a.cache) return { creation: 0, read: 0, ttl: '5m' };
    const half = Math.floor(a.total_input_tokens / 2);
    if (this.keys.has(a.cache.key)) return { creation: 0, read: half, ttl: a.cache.ttl };
    if (this.keys.size >= this.maxEntries) this.keys.delete(this.keys.values().next().value!);
    this.keys.add(a.cache.key);
    return { creation: half, read: 0, ttl: a.cache.ttl };
  }

  clear(): void { this.keys.clear(); }
}

/** Answers a Messages request whose `container` is an object (skills, anthropic-skills.ts); `fail` sends a 400. */
export type ContainerAnswer = (x: Exchange, req: SimMessagesRequest, fail: (message: string) => void) => Promise<void>;

/**
 * The Anthropic routes of one simulator, sharing its prompt-cache memory (cleared by `reset`); with
 * `container`, a `POST /v1/messages` whose body has a `container` object is answered by it.
 */
export function createMessagesRoutes(opts: { container?: ContainerAnswer } = {}): { messages: SimRoute; countTokens: SimRoute; reset(): void } {
  const cache = new PromptCache();

  /** The request after the checks both routes share, or undefined once an error was sent. */
  const accept = (x: Exchange, countOnly: boolean) => {
    const fail = (message: string) => { x.sendJson(400, anthropicError('invalid_request_error', message, x.raw), { 'request-id': requestId(x.raw) }); };
    if (x.headers['anthropic-version'] === undefined) return fail('anthropic-version: header is required');
    if (!x.parsed) return fail('There was an error parsing the body of your request: invalid JSON.');
    const valid = validateMessagesRequest(x.body, countOnly);
    if (!valid.ok) return fail(valid.message);
    return { req: valid.value, fail };
  };

  const messages: SimRoute = {
    faultResponse: anthropicFaultResponse,
    prefill: true,
    async handle(x) {
      const accepted = accept(x, false);
      if (!accepted) return;
      if (x.fault.reject_prefill && accepted.req.messages[accepted.req.messages.length - 1]!.role === 'assistant') return accepted.fail(PREFILL_REFUSED);
      const container: unknown = (accepted.req as SimMessagesRequest & { container?: unknown }).container;
      if (opts.container && typeof container === 'object' && container !== null) return opts.container(x, accepted.req, accepted.fail);
      const answer = answerMessages(accepted.req, x.raw, x.fault.answer_words);
      if (!answer.ok) return accepted.fail(answer.message);
      const split = cache.split(answer.value); // an omit_usage request still writes or reads the cache
      const usage = x.fault.omit_usage === true ? null : messagesUsage(answer.value, split);
      const headers = { 'request-id': requestId(x.raw) };
      if (accepted.req.stream !== true) return x.sendJson(200, messageBody(answer.value, usage), headers);
      await x.stream(messagesStreamEvents(answer.value, usage), { error: () => MESSAGES_ERROR_EVENT, finalEvent: true, malformed: MESSAGES_MALFORMED_EVENT }, headers);
    },
  };

  const countTokens: SimRoute = {
    faultResponse: anthropicFaultResponse,
    async handle(x) {
      const accepted = accept(x, true);
      if (!accepted) return;
      x.sendJson(200, { input_tokens: countMessagesInputTokens(accepted.req) }, { 'request-id': requestId(x.raw) });
    },
  };

  return { messages, countTokens, reset: () => cache.clear() };
}
