/**
 * Delivered-usage checkpoints of a running stream (issue 8 item 5). The timer that keeps a stream's
 * hold alive also records on the hold the usage rows of what the client has received so far, priced
 * as a partial answer. If the process dies, the sweeper settles those rows when the hold expires, so
 * delivered work is billed up to the last checkpoint; the request's own settle supersedes them.
 * A tick with nothing new delivered only extends the hold; a tick never overlaps the previous one.
 */
import type { StreamTranslator } from '../../translate/types.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';
import { meterOf } from '../../meters/index.js';
import type { UsageRowInput } from '../../ledger/types.js';
import { checkpointHold, trackOnGrant } from '../hold.js';

/** The shortest interval between two ticks, whatever the configuration says. */
const MIN_INTERVAL_MS = 250;

/** Starts the keep-alive and checkpoints of `ctx`'s hold; returns the function that stops them. */
export function startCheckpoints(ctx: RequestContext, runtime: Runtime, translator: StreamTranslator): () => void {
  const hold = ctx.hold!;
  let recordedLength = 0;
  /**
   * The rows of what was delivered since the last record, or null when nothing new was. On a grant
   * the flusher records a piece the stream is about to write too (its gate waits for that record), so
   * what has not reached the client yet is counted: a crash then bills at most that piece early.
   */
  const deliveredRows = (): UsageRowInput[] | null => {
    const text = translator.deliveredText();
    if ((!ctx.started && !hold.draw) || text.length <= recordedLength) return null;
    const billed = meterOf(ctx)?.bill(ctx, { delivery: 'partial', reported: translator.usage(), deliveredText: text }, hold.inputEstimate);
    if (!billed) return null;
    recordedLength = text.length;
    // A continuation's checkpoint also records what was delivered before the cut (issue 29 item 6).
    return [...(ctx.routing?.rescue?.carried.rows ?? []), ...billed.rows];
  };
  // On a grant the flusher records the checkpoints (issue 30): no timer of the stream's own.
  if (hold.draw) {
    trackOnGrant(ctx, runtime, deliveredRows, () => translator.deliveredLength());
    return () => undefined;
  }
  const { holdTtlMs, checkpointMs } = ctx.gateway.settings;
  // At least three ticks per hold lifetime, so one lost tick never lets a live stream's hold expire.
  const every = Math.max(MIN_INTERVAL_MS, Math.min(holdTtlMs / 3, checkpointMs));
  let busy = false;
  const tick = async (): Promise<void> => {
    const before = recordedLength;
    const rows = deliveredRows();
    // A tick whose record failed records the same rows (and more) at the next one.
    if (!await checkpointHold(ctx, runtime, rows).catch((e: unknown) => { recordedLength = before; throw e; })) recordedLength = before;
  };
  const timer = setInterval(() => {
    if (busy || !hold.open) return;
    busy = true;
    // A failed tick (the store away) is retried at the next one; the outage itself is logged once.
    tick().catch(() => undefined).finally(() => { busy = false; });
  }, every);
  return () => clearInterval(timer);
}
