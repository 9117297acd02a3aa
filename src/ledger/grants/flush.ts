/**
 * One grant's part of a flush (issue 30): what its item says (buildItem) and what the store's answer
 * changes in the book (applyLine). An item, once sent, is sent again unchanged until it is answered,
 * so a flush whose answer was lost is applied once (its sequence number, migration 013).
 */
import { rowPayload } from '../holds.js';
import { GrantAccount, type Draw, type FlushItem, type SentItem } from './account.js';
import type { GrantSettings } from './settings.js';
import { grantTarget, nextLargest, nextPeak } from './sizing.js';

/** A flush as ledger_grant_flush reads it. */
export interface FlushPayload {
  owner: string;
  lease_ms: number;
  fraction: string;
  commit: 'durable' | 'async';
  items: FlushItem[];
}

/** One line of its answer. */
export interface FlushLine {
  grant_id: string;
  status: 'ok' | 'opened' | 'refused' | 'duplicate' | 'closed' | 'unknown';
  amount: unknown;
  available: unknown;
  reclaim: boolean;
  refused: string[] | null;
}

/** Raised to an answer that waited for a post the store refused (its grant lapsed while the store was away). */
export class GrantLapsedError extends Error {
  constructor() {
    super('the credit grant lapsed while the store was unreachable, and the balance no longer covers this charge');
    this.name = 'GrantLapsedError';
  }
}

/** Whether the grant's size should change: grown when requests missed it or it is well under target, shrunk well over. */
function resizeDue(acc: GrantAccount, targetNano: bigint): boolean {
  if (targetNano > acc.amountNano) return acc.missedNano > 0n || acc.amountNano * 2n < targetNano;
  return targetNano * 4n < acc.amountNano * 3n;
}

/** The streams to snapshot now: all when one waits for its record, else those with news past the checkpoint interval. */
function dueStreams(acc: GrantAccount, now: number, checkpointMs: number): Draw[] {
  return [...acc.streams].filter((d) => {
    const s = d.stream!;
    return s.chars > s.recordedChars && (acc.recordNow || now - s.snapshotAt >= checkpointMs);
  });
}

/**
 * The item for one grant, or null when it has nothing to say. It carries the charges queued, the
 * size wanted (0 while the account is strict or closing: back to what is in flight), the streams'
 * records, and renews the lease at least three times per lease.
 */
export function buildItem(acc: GrantAccount, s: GrantSettings, now: number, checkpointMs: number): FlushItem | null {
  if (acc.sent) return acc.sent.item;
  acc.peakDemandNano = nextPeak(acc, s.flushMs);
  const { targetNano, floorNano } = grantTarget(acc, s);
  acc.largestQuoteNano = nextLargest(acc.largestQuoteNano);
  const strict = now < acc.strictUntil;
  const idle = !acc.busy() && now - acc.lastUsed >= s.idleReturnMs;
  if (idle) acc.closing = true;
  const target = acc.closing || strict ? 0n : targetNano;
  if (!acc.live && !acc.dead) {
    if (target === 0n || acc.closing) return null;
    const open: FlushItem = { grant: acc.grantId, account: acc.accountId, seq: ++acc.seq, open: true, target: target.toString(), min: floorNano.toString(), keep: '0', rows: [], waiting: [], delivered: [] };
    return send(acc, now, open, { targetNano: target, streams: [], leaseMs: s.leaseMs });
  }
  const streams = dueStreams(acc, now, checkpointMs);
  const renew = now - acc.lastSent >= s.leaseMs / 3;
  const giveBack = target < acc.amountNano && (strict || acc.closing);
  // A closing grant with nothing in flight is closed even when it holds nothing (a reclaim gave it all
  // back): left open until its next renewal, a graceful stop spun on it meanwhile.
  const close = acc.closing && acc.inflightNano === 0n && acc.streams.size === 0;
  const due = acc.rows.length > 0 || acc.waiting.length > 0 || streams.length > 0 || acc.flushWaiters.length > 0
    || renew || giveBack || (close && !acc.dead) || (!acc.dead && resizeDue(acc, target));
  if (!due) return null;
  // A stream whose snapshot has nothing new (its text was already recorded) is not counted as recorded further.
  const recorded = streams.filter((d) => {
    const record = d.stream!;
    const rows = record.snapshot();
    record.snapshotAt = now;
    if (rows) record.rows = rows;
    return rows !== null;
  });
  const item: FlushItem = {
    grant: acc.grantId, account: acc.accountId, seq: ++acc.seq, target: target.toString(), min: floorNano.toString(),
    keep: acc.inflightNano.toString(), rows: acc.rows.map(rowPayload), waiting: acc.waiting.flatMap((w) => w.rows.map(rowPayload)),
    delivered: [...acc.streams].flatMap((d) => d.stream!.rows.map(rowPayload)),
  };
  if (close) item.close = true;
  return send(acc, now, item, { targetNano: target, streams: recorded.map((draw) => ({ draw, chars: draw.stream!.chars })), leaseMs: s.leaseMs });
}

/** Marks the item sent: the queued charges and waiters move onto it. */
function send(acc: GrantAccount, now: number, item: FlushItem, sizing: Pick<SentItem, 'targetNano' | 'streams' | 'leaseMs'>): FlushItem {
  const queued = [...acc.rows, ...acc.waiting.flatMap((w) => w.rows)];
  acc.sent = {
    ...sizing, item, sentAt: now, waiting: acc.waiting, waiters: acc.flushWaiters,
    postedNano: queued.reduce((sum, r) => sum + r.amountNano, 0n),
  };
  acc.rows = [];
  acc.waiting = [];
  acc.flushWaiters = [];
  acc.missedNano = 0n;
  acc.recordNow = false;
  acc.lastSent = now;
  return item;
}

/** What applying an answer did: exposure it freed, and whether the account's state can go. */
export interface LineEffect { exposureFreedNano: bigint; forget: boolean }

/** Applies the store's answer for one grant's item. */
export function applyLine(acc: GrantAccount, line: FlushLine, now: number, strictPauseMs: number): LineEffect {
  const sent = acc.sent!;
  acc.sent = null;
  acc.availableNano = BigInt(line.available as string);
  acc.unpostedNano -= sent.postedNano;
  let freed = sent.postedNano;
  if (line.reclaim) acc.strictUntil = now + strictPauseMs;
  if (line.status === 'closed' || line.status === 'unknown') {
    // The grant is gone: late-posted charges answered, refused ones failed; nothing more is admitted on it.
    const refused = new Set(line.refused ?? []);
    for (const w of sent.waiting) {
      if (line.status === 'unknown' || refused.has(w.rows[0]?.requestId ?? '')) w.reject(new GrantLapsedError());
      else w.resolve();
    }
    for (const w of sent.waiters) w.resolve();
    acc.live = false;
    acc.dead = true;
    acc.amountNano = 0n;
    return { exposureFreedNano: freed, forget: !acc.busy() };
  }
  if (line.status === 'refused') {
    acc.strictUntil = now + strictPauseMs;
    for (const w of [...sent.waiting, ...sent.waiters]) w.resolve();
    return { exposureFreedNano: freed, forget: false };
  }
  // ok, opened, duplicate (applied before: the state it answers is the current one).
  acc.live = true;
  acc.amountNano = BigInt(line.amount as string);
  acc.deadline = sent.sentAt + sent.leaseMs;
  for (const { draw, chars } of sent.streams) {
    const s = draw.stream!;
    if (!acc.streams.has(draw)) continue;
    const before = GrantAccount.unrecordedOf(s);
    s.startRecorded = true;
    if (chars > s.recordedChars) s.recordedChars = chars;
    const after = GrantAccount.unrecordedOf(s);
    acc.unrecordedNano -= before - after;
    freed += before - after;
  }
  for (const w of [...sent.waiting, ...sent.waiters]) w.resolve();
  return { exposureFreedNano: freed, forget: sent.item.close === true };
}
