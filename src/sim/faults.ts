/**
 * Fault injection for the simulator: a list of faults, each optionally scoped to one model and/or one
 * credential, optionally for a time window; every wire format honours them.
 */
import type http from 'node:http';

/** The vendor errors `error_code` selects. */
export const ERROR_CODES = ['context_length_exceeded', 'content_policy_violation'] as const;
export type SimErrorCode = (typeof ERROR_CODES)[number];

/**
 * One injected fault; all fields optional, effects combine. "Events" are the server-sent events of the
 * format's stream: chat counts the role chunk first, messages counts message_start, content_block_start
 * and ping before the first text delta, responses counts response.created, .in_progress,
 * output_item.added and content_part.added before the first output_text.delta.
 */
export interface SimFault {
  /** Answer this HTTP status (400-599) with an error body in the request's format (OpenAI or Anthropic shape). */
  status?: number;
  /** With `status`: the answer carries `Retry-After: <n>` (any format; replaces the 429's default of 7). */
  retry_after_seconds?: number;
  /** With `status`: the answer carries `retry-after-ms: <n>` (any format). */
  retry_after_ms?: number;
  /** With `status`: the answer carries neither Retry-After nor retry-after-ms (a 429 normally says 7). */
  omit_retry_after?: boolean;
  /**
   * With `status` (normally 400): the body is the vendor's own error for that reason. OpenAI-shaped
   * routes: `{error: {message, type: "invalid_request_error", param, code: <error_code>}}`; Anthropic-shaped
   * routes: `{type: "error", error: {type: "invalid_request_error", message: "prompt is too long: ..." |
   * "Output blocked by content filtering policy"}, request_id}`.
   */
  error_code?: SimErrorCode;
  /** Wait this long before sending response headers (a silent upstream when large; cancelled when the client goes). */
  latency_ms?: number;
  /** After `latency_ms`, reset the TCP connection (RST) without any response. */
  reset_before_headers?: boolean;
  /** Stream only: destroy the socket after this many events (no [DONE] / final event, no usage). */
  truncate_after_chunks?: number;
  /**
   * Never report usage. Chat: no `usage` field / usage chunk. Responses: `usage: null` in the final
   * Response. Messages: no `usage` field in JSON; in a stream, zeros in message_start and no usage in message_delta.
   */
  omit_usage?: boolean;
  /** Stream only: after this many events send the format's error event and end the response. */
  error_after_chunks?: number;
  /** How many matching requests this fault applies to; unlimited when absent. */
  times?: number;
  /** The fault matches only requests arriving within this many ms after it was added; then it is dropped. */
  active_for_ms?: number;
  /** Extension: stream only, wait this long between events (to test mid-stream aborts). */
  chunk_delay_ms?: number;
  /**
   * Extension: stream only, after a complete stream's last event wait this long before ending the
   * HTTP body (the end of the framing then comes in a later packet, as it can from a real vendor).
   */
  end_delay_ms?: number;
  /** Stream only: headers go out at once, the first event waits this long (a slow first token). */
  first_event_delay_ms?: number;
  /** Stream only, with `stall_ms`: after this many events the stream is silent for `stall_ms`, then goes on. */
  stall_after_chunks?: number;
  /** See `stall_after_chunks`; a huge value is a hang (cancelled when the client goes or the simulator closes). */
  stall_ms?: number;
  /**
   * Stream only: after this many events one event that is not valid JSON is written, then the stream
   * goes on with the rest. Chat: `data: {"choices":[{"delta":{"content": oops\n\n`; messages and
   * responses: the same broken JSON named as their text delta event (`event: content_block_delta` /
   * `event: response.output_text.delta`).
   */
  malformed_after_chunks?: number;
  /**
   * Stream only: a complete stream ends without its terminator (chat: no `data: [DONE]`; messages: no
   * `message_stop`; responses: no `response.completed` / `.incomplete`); the HTTP body ends normally.
   */
  omit_done?: boolean;
  /**
   * Messages format only: the fault matches only requests whose last message is `assistant` (a
   * prefill), answered 400 "This model does not support assistant message prefill. ..."; other
   * requests skip it (and do not use up its `times`).
   */
  reject_prefill?: boolean;
  /**
   * Text answers (chat, responses, messages) have exactly this many words, so a stream has exactly
   * this many content events: the reply sentence's first words, padded with " lorem"; usage counts
   * them; overrides the output budget (max_tokens), the finish reason is a normal stop.
   */
  answer_words?: number;
  /**
   * Extension: binary answers only (served in pieces), the last piece (or, with truncate_after_chunks,
   * the cut) waits until `POST /__sim/release`: a test sees what reached the client meanwhile.
   */
  hold_last_chunk?: boolean;
}

/** A stored fault as listed by `GET /__sim/faults`. */
export interface FaultEntry {
  id: number;
  /** The model the fault applies to, or null for every model. */
  model: string | null;
  /** The credential (bearer token, x-api-key or api-key) the fault applies to, or null for every one. */
  key: string | null;
  fault: SimFault;
  /** Remaining applications, or null when unlimited. */
  remaining: number | null;
  /** When it stops matching (ms since the epoch), or null when it does not expire. */
  expires_at_ms: number | null;
}

/** What a fault is matched against. */
export interface FaultRequest {
  model: string | undefined;
  key: string | null;
  /** The request is an assistant prefill on the messages format (fault `reject_prefill`). */
  prefill: boolean;
}

/** Longest timer Node.js honours (a larger one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;
const TIMER_FIELDS = ['latency_ms', 'chunk_delay_ms', 'end_delay_ms', 'first_event_delay_ms', 'stall_ms'] as const;
const COUNT_FIELDS = [
  'truncate_after_chunks', 'error_after_chunks', 'stall_after_chunks', 'malformed_after_chunks', 'answer_words',
  'retry_after_seconds', 'retry_after_ms',
] as const;
const BOOLEAN_FIELDS = ['omit_usage', 'hold_last_chunk', 'reset_before_headers', 'omit_done', 'reject_prefill', 'omit_retry_after'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

const includes = (list: readonly string[], key: string) => list.includes(key);

/** Checks one fault field and stores it in `fault`; an error message when invalid. */
function parseField(fault: SimFault, key: string, value: unknown): string | undefined {
  const f = fault as Record<string, unknown>;
  if (key === 'status') {
    if (!isCount(value) || value < 400 || value > 599) return 'fault.status must be an integer in 400..599';
  } else if (includes(BOOLEAN_FIELDS, key)) {
    if (typeof value !== 'boolean') return `fault.${key} must be a boolean`;
  } else if (key === 'times' || key === 'active_for_ms') {
    if (!isCount(value) || value < 1) return `fault.${key} must be a positive integer`;
  } else if (includes(TIMER_FIELDS, key)) {
    if (!isCount(value)) return `fault.${key} must be a non-negative integer`;
    if (value > MAX_TIMER_MS) return `fault.${key} must be at most ${MAX_TIMER_MS} (about 24.8 days)`;
  } else if (includes(COUNT_FIELDS, key)) {
    if (!isCount(value)) return `fault.${key} must be a non-negative integer`;
  } else if (key === 'error_code') {
    if (typeof value !== 'string' || !includes(ERROR_CODES, value)) return `fault.error_code must be one of ${ERROR_CODES.join(', ')}`;
  } else {
    return `unknown fault field: ${key}`;
  }
  f[key] = value;
  return undefined;
}

/** Checks the fields that only make sense together; an error message when they do not fit. */
function checkCombination(fault: SimFault): string | undefined {
  for (const key of ['error_code', 'retry_after_seconds', 'retry_after_ms', 'omit_retry_after'] as const) {
    if (fault[key] !== undefined && fault.status === undefined) return `fault.${key} needs fault.status`;
  }
  if (fault.omit_retry_after && (fault.retry_after_seconds !== undefined || fault.retry_after_ms !== undefined)) {
    return 'fault.omit_retry_after cannot be combined with retry_after_seconds or retry_after_ms';
  }
  if ((fault.stall_after_chunks === undefined) !== (fault.stall_ms === undefined)) return 'fault.stall_after_chunks and fault.stall_ms go together';
  return undefined;
}

/** Validates a `POST /__sim/faults` body `{model?, key?, fault}`; returns the parsed entry or an error message. */
export function parseFaultBody(body: unknown): { model: string | null; key: string | null; fault: SimFault } | string {
  if (!isRecord(body)) return 'body must be a JSON object {model?, key?, fault}';
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') return 'model must be a string';
  if (body.key !== undefined && body.key !== null && typeof body.key !== 'string') return 'key must be a string';
  const raw = body.fault;
  if (!isRecord(raw)) return 'fault must be an object';
  const fault: SimFault = {};
  for (const key of Object.keys(raw)) {
    const error = parseField(fault, key, raw[key]);
    if (error) return error;
  }
  const error = checkCombination(fault);
  if (error) return error;
  return { model: typeof body.model === 'string' ? body.model : null, key: typeof body.key === 'string' ? body.key : null, fault };
}

/** The Retry-After headers of a status answer: the route's `headers` with the fault's overrides. */
export function retryHeaders(fault: SimFault, headers: http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
  const out = { ...headers };
  if (fault.omit_retry_after) {
    delete out['retry-after'];
    delete out['retry-after-ms'];
  }
  if (fault.retry_after_seconds !== undefined) out['retry-after'] = String(fault.retry_after_seconds);
  if (fault.retry_after_ms !== undefined) out['retry-after-ms'] = String(fault.retry_after_ms);
  return out;
}

/**
 * Ordered fault list; the first fault matching a request (model, credential, time window, prefill)
 * applies and uses up one `times`.
 */
export class FaultStore {
  private entries: FaultEntry[] = [];
  private nextId = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds a fault for `model` and `key` (null = any) and returns its entry. */
  add(model: string | null, key: string | null, fault: SimFault): FaultEntry {
    const expires = fault.active_for_ms === undefined ? null : this.now() + fault.active_for_ms;
    const entry: FaultEntry = { id: this.nextId++, model, key, fault, remaining: fault.times ?? null, expires_at_ms: expires };
    this.entries.push(entry);
    return { ...entry };
  }

  /** Removes every fault; returns how many were removed. */
  clear(): number {
    const count = this.entries.length;
    this.entries = [];
    return count;
  }

  /** Snapshot of the active faults in match order. */
  list(): FaultEntry[] {
    this.dropExpired();
    return this.entries.map((entry) => ({ ...entry }));
  }

  /** The fault for a request, consuming one application of it; null when none matches. */
  take(request: FaultRequest): SimFault | null {
    if (this.entries.length === 0) return null;
    this.dropExpired();
    const index = this.entries.findIndex((entry) =>
      (entry.model === null || entry.model === request.model)
      && (entry.key === null || entry.key === request.key)
      && (entry.fault.reject_prefill !== true || request.prefill));
    if (index < 0) return null;
    const entry = this.entries[index]!;
    if (entry.remaining !== null) {
      entry.remaining -= 1;
      if (entry.remaining <= 0) this.entries.splice(index, 1);
    }
    return entry.fault;
  }

  private dropExpired(): void {
    const now = this.now();
    if (this.entries.some((e) => e.expires_at_ms !== null && now >= e.expires_at_ms)) {
      this.entries = this.entries.filter((e) => e.expires_at_ms === null || now < e.expires_at_ms);
    }
  }
}
