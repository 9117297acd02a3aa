/**
 * One account's grant as a replica's book keeps it (issue 30): what the store holds for it, what is
 * admitted against it in memory, and what waits to be posted. Headroom is what a new request may be
 * admitted against: the grant, less the quotes of requests in flight, less the charges answered but
 * not yet posted. While a flush that may shrink the grant is in flight, the smaller of the two sizes
 * counts, so nothing is admitted that the store's answer could leave uncovered.
 */
import type { UsageRow } from '../types.js';

/** A request admitted against a grant: its quote is held in memory until it finishes. */
export interface Draw {
  readonly requestId: string;
  readonly accountId: string;
  readonly quoteNano: bigint;
  /** Set once: finished (charged) or released. */
  done: boolean;
  /** A stream's delivered usage, recorded on the grant by the flusher; null for other requests. */
  stream: StreamRecord | null;
}

/** What a running stream has delivered, and how much of it the store has recorded (a checkpoint). */
export interface StreamRecord {
  /** The usage rows of what has been delivered so far (the meter's partial bill), or null when nothing new. */
  snapshot(): UsageRow[] | null;
  /** The rows last taken for the grant's record (sent again with every flush while the stream runs). */
  rows: UsageRow[];
  /** A checkpoint of this stream was acknowledged: what it owes before any content (its input) is covered. */
  startRecorded: boolean;
  /** What the stream has delivered, in characters, as it last reported. */
  chars: number;
  /** Characters covered by a checkpoint the store acknowledged. */
  recordedChars: number;
  /** Ceiling of what a stream owes before its first checkpoint (its input), and per delivered character. */
  startNano: bigint;
  perCharNano: bigint;
  /** When the stream was last snapshotted (ms). */
  snapshotAt: number;
}

/** One flush item, as it is sent (and sent again, unchanged, while its answer is in doubt). */
export interface FlushItem {
  grant: string;
  account: string;
  seq: number;
  open?: true;
  close?: true;
  target: string;
  min: string;
  keep: string;
  rows: unknown[];
  waiting: unknown[];
  delivered: unknown[];
}

/** What an item carried, to apply once its answer comes back. */
export interface SentItem {
  item: FlushItem;
  postedNano: bigint;
  /** Answers waiting for their own charges to be posted. */
  waiting: Array<Waiter & { rows: UsageRow[] }>;
  /** Waiting for this flush only. */
  waiters: Waiter[];
  streams: Array<{ draw: Draw; chars: number }>;
  /** The lease this item renews. */
  leaseMs: number;
  targetNano: bigint;
  /** When the item was first sent (ms): the lease it renews runs from no earlier than this. */
  sentAt: number;
}

/** Something waiting for a flush to be acknowledged. */
export interface Waiter { resolve: () => void; reject: (error: Error) => void }

/** One account's grant state in a replica's book. */
export class GrantAccount {
  /** The grant's hold id (a new one whenever a grant is opened). */
  grantId: string;
  /** The grant's amount as the store last answered; 0 while opening. */
  amountNano = 0n;
  /** Quotes of the requests admitted and not finished, and how many they are. */
  inflightNano = 0n;
  draws = 0;
  /** Charges finished and not yet acknowledged posted. */
  unpostedNano = 0n;
  /** Rows of answered requests, for the next flush. */
  rows: UsageRow[] = [];
  /** Rows of answers that wait for the next flush, with their waiter. */
  waiting: Array<Waiter & { rows: UsageRow[] }> = [];
  /** Waiting for the next acknowledged flush (a stream over U, a give-back before a 402). */
  flushWaiters: Waiter[] = [];
  /** Snapshot every stream at the next flush (one waits for its exposure to be recorded). */
  recordNow = false;
  /** Stream content delivered and not covered by an acknowledged checkpoint, priced at its ceiling. */
  unrecordedNano = 0n;
  /** Running streams admitted against this grant. */
  readonly streams = new Set<Draw>();
  /** Last sequence number used. */
  seq = 0;
  /** The item sent and not yet answered (resent unchanged after a failure). */
  sent: SentItem | null = null;
  /** No admission at or after this (local ms): the lease of the last acknowledged flush. */
  deadline = 0;
  /** Opened in the store (false until the open is acknowledged). */
  live = false;
  /** Take the strict path until then (after a reclaim, or an open the balance refused). */
  strictUntil = 0;
  /** Available money of the account (balance + credit limit) as the last answer said. */
  availableNano: bigint | null = null;
  /** The largest quote admitted or asked for recently, and the peak demand, for sizing. */
  largestQuoteNano = 0n;
  peakDemandNano = 0n;
  /** Quotes that found no headroom since the last flush. */
  missedNano = 0n;
  /** Last admission (ms), for idle return. */
  lastUsed: number;
  /** When the last flush of this grant was sent (ms), for lease renewal. */
  lastSent = 0;
  /** Give the grant back whole at the next flush (idle, or the book closing). */
  closing = false;
  /** The grant is gone from the store (swept, or its open lost): what is still in flight is posted late, then forgotten. */
  dead = false;

  constructor(readonly accountId: string, grantId: string, now: number) {
    this.grantId = grantId;
    this.lastUsed = now;
  }

  /** The size admissions count against: during a flush, the smaller of the grant and the size asked for. */
  effectiveNano(): bigint {
    const sent = this.sent;
    return sent && sent.targetNano < this.amountNano ? sent.targetNano : this.amountNano;
  }

  /** What a new request may be admitted against. */
  headroomNano(): bigint {
    return this.effectiveNano() - this.inflightNano - this.unpostedNano;
  }

  /** What a crash of this replica could leave unbilled for this account (bounded by U). */
  exposureNano(): bigint {
    return this.unpostedNano + this.unrecordedNano;
  }

  /** Requests in flight, streams running or charges queued. */
  busy(): boolean {
    return this.inflightNano > 0n || this.streams.size > 0 || this.rows.length > 0 || this.waiting.length > 0;
  }

  /** What a stream owes beyond its acknowledged checkpoint, at its ceiling. */
  static unrecordedOf(s: StreamRecord): bigint {
    return (s.startRecorded ? 0n : s.startNano) + BigInt(Math.max(0, s.chars - s.recordedChars)) * s.perCharNano;
  }
}
