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
import { checkpointHold } from '../hold.js';

/** The shortest interval between two ticks, whatever the configuration says. */
const MIN_INTERVAL_MS = 250;

/** Starts the keep-alive and checkpoints of `ctx`'s hold; returns the function that stops them. */
export function startCheckpoints(ctx: RequestContext, runtime: Runtime, translator: StreamTranslator): () => void {
  const hold = ctx.hold!;
  const { holdTtlMs, checkpointMs } = ctx.gateway.settings;
  // At least three ticks per hold lifetime, so one lost tick never lets a live stream's hold expire.
  const every = Math.max(MIN_INTERVAL_MS, Math.min(holdTtlMs / 3, checkpointMs));
  let recordedLength = 0;
  let busy = false;
  const tick = async (): Promise<void> => {
    const text = translator.deliveredText();
    const fresh = ctx.started && text.length > recordedLength;
    const billed = fresh ? meterOf(ctx)?.bill(ctx, { delivery: 'partial', reported: translator.usage(), deliveredText: text }, hold.inputEstimate) : null;
    // A continuation's checkpoint also records what was delivered before the cut (issue 29 item 6).
    const carried = ctx.routing?.rescue?.carried.rows ?? [];
    const rows = billed ? [...carried, ...billed.rows] : null;
    if (await checkpointHold(ctx, runtime, rows) && fresh) recordedLength = text.length;
  };
  const timer = setInterval(() => {
    if (busy || !hold.open) return;
    busy = true;
    // A failed tick (the store away) is retried at the next one; the outage itself is logged once.
    tick().catch(() => undefined).finally(() => { busy = false; });
  }, every);
  return () => clearInterval(timer);
}
