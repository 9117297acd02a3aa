/**
 * The simulator's request log (`GET /__sim/requests`): one record per model request in arrival order,
 * the last `max` kept, each with the status it was answered (null while unanswered or after a reset).
 */
import type http from 'node:http';

/** One model request as `GET /__sim/requests` lists it. */
export interface SimRequestRecord {
  /** Arrival time, ms since the epoch. */
  at_ms: number;
  path: string;
  /** The body's `model`, else the native route's fault key, else null. */
  model: string | null;
  /** The credential (see `requestCredential`), or null. */
  key: string | null;
  stream: boolean;
  /** Role of the last entry of the body's `messages`, or null without messages. */
  last_role: string | null;
  /** The status answered; null for a connection reset or dropped before any headers. */
  status: number | null;
  /** The W3C `traceparent` header the gateway sent (traces on, issue 33 item 1); absent when it sent none. */
  traceparent?: string;
}

/** The credential of a request: `Authorization: Bearer <key>`, else `x-api-key`, else `api-key`; null without one. */
export function requestCredential(headers: http.IncomingHttpHeaders): string | null {
  const bearer = /^bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  if (bearer) return bearer;
  for (const name of ['x-api-key', 'api-key']) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first !== '') return first;
  }
  return null;
}

/** Role of the last message of a parsed body with a `messages` array, else null. */
export function lastMessageRole(body: Record<string, unknown>): string | null {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const last: unknown = messages[messages.length - 1];
  return typeof last === 'object' && last !== null && typeof (last as { role?: unknown }).role === 'string' ? (last as { role: string }).role : null;
}

const statusOf = (res: http.ServerResponse): number | null => (res.headersSent ? res.statusCode : null);

/** A bounded ring of request records. */
export class RequestLog {
  /** Each record with its response while that is open (its status is then read from it). */
  private ring: Array<{ record: SimRequestRecord; res: http.ServerResponse | null }> = [];
  private head = 0;

  constructor(private readonly max = 10_000) {}

  /** Records a request answered on `res`; its status is read from `res` until it closes, then fixed. */
  add(record: Omit<SimRequestRecord, 'status'>, res: http.ServerResponse): void {
    const entry: { record: SimRequestRecord; res: http.ServerResponse | null } = { record: { ...record, status: null }, res };
    res.once('close', () => {
      entry.record.status = statusOf(res);
      entry.res = null;
    });
    if (this.ring.length < this.max) this.ring.push(entry);
    else {
      this.ring[this.head] = entry;
      this.head = (this.head + 1) % this.max;
    }
  }

  /** The records in arrival order, only those for `model` when given. */
  list(model?: string | null): SimRequestRecord[] {
    const ordered = [...this.ring.slice(this.head), ...this.ring.slice(0, this.head)];
    const chosen = model === undefined || model === null ? ordered : ordered.filter((e) => e.record.model === model);
    return chosen.map((e) => (e.res ? { ...e.record, status: statusOf(e.res) } : { ...e.record }));
  }

  clear(): void {
    this.ring = [];
    this.head = 0;
  }
}
