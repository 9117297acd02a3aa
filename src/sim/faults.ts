/** Fault injection for the simulator: a list of faults, each optionally scoped to one model; every wire format honours them. */

/** One injected fault; all fields optional, effects combine. */
export interface SimFault {
  /** Answer this HTTP status (400-599) with an error body in the request's format (OpenAI or Anthropic shape). */
  status?: number;
  /** Wait this long before sending response headers. */
  latency_ms?: number;
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
  /** Extension: stream only, wait this long between events (to test mid-stream aborts). */
  chunk_delay_ms?: number;
  /**
   * Extension: stream only, after a complete stream's last event wait this long before ending the
   * HTTP body (the end of the framing then comes in a later packet, as it can from a real vendor).
   */
  end_delay_ms?: number;
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
  fault: SimFault;
  /** Remaining applications, or null when unlimited. */
  remaining: number | null;
}

const NUMERIC_FIELDS = ['latency_ms', 'truncate_after_chunks', 'error_after_chunks', 'chunk_delay_ms', 'end_delay_ms'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Validates a `POST /__sim/faults` body `{model?, fault}`; returns the parsed pair or an error message. */
export function parseFaultBody(body: unknown): { model: string | null; fault: SimFault } | string {
  if (!isRecord(body)) return 'body must be a JSON object {model?, fault}';
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') return 'model must be a string';
  const raw = body.fault;
  if (!isRecord(raw)) return 'fault must be an object';
  const fault: SimFault = {};
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    if (key === 'status') {
      if (!isCount(value) || value < 400 || value > 599) return 'fault.status must be an integer in 400..599';
      fault.status = value;
    } else if (key === 'omit_usage' || key === 'hold_last_chunk') {
      if (typeof value !== 'boolean') return `fault.${key} must be a boolean`;
      fault[key] = value;
    } else if (key === 'times') {
      if (!isCount(value) || value < 1) return 'fault.times must be a positive integer';
      fault.times = value;
    } else if ((NUMERIC_FIELDS as readonly string[]).includes(key)) {
      if (!isCount(value)) return `fault.${key} must be a non-negative integer`;
      fault[key as (typeof NUMERIC_FIELDS)[number]] = value;
    } else {
      return `unknown fault field: ${key}`;
    }
  }
  return { model: typeof body.model === 'string' ? body.model : null, fault };
}

/** Ordered fault list; the first fault matching a request's model applies and uses up one `times`. */
export class FaultStore {
  private entries: FaultEntry[] = [];
  private nextId = 1;

  /** Adds a fault for `model` (null = every model) and returns its entry. */
  add(model: string | null, fault: SimFault): FaultEntry {
    const entry: FaultEntry = { id: this.nextId++, model, fault, remaining: fault.times ?? null };
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
    return this.entries.map((entry) => ({ ...entry }));
  }

  /** The fault for a request to `model`, consuming one application of it; null when none matches. */
  take(model: string | undefined): SimFault | null {
    const index = this.entries.findIndex((entry) => entry.model === null || entry.model === model);
    if (index < 0) return null;
    const entry = this.entries[index]!;
    if (entry.remaining !== null) {
      entry.remaining -= 1;
      if (entry.remaining <= 0) this.entries.splice(index, 1);
    }
    return entry.fault;
  }
}
