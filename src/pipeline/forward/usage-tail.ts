/**
 * A stream's final usage, held until the request is billed (issue 31 item 12): the frame carrying the
 * final usage (the format says which: src/formats/<id>/ `usageCost`) and every frame after it wait,
 * and are written once the meter settled, with `usage.cost` the charge of the usage rows written. The
 * client sees the same frames in the same order, the last ones a moment later.
 */
import { frameWithCost, type UsageCostPlaces } from '../../formats/usage-cost.js';

/** The held end of one stream. */
export class UsageTail {
  private held: Array<{ frame: string; path: readonly string[] | null }> | null = null;

  constructor(private readonly places: UsageCostPlaces | null) {}

  /** The frames of one step to write now: all of them until the final usage, none from it on. */
  take(frames: string[]): string[] {
    if (!this.places) return frames;
    let now: string[] | null = null;
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      const path = this.held ? null : this.places.frame(frame);
      if (!this.held && !path) continue;
      now ??= frames.slice(0, i);
      (this.held ??= []).push({ frame, path });
    }
    return now ?? frames;
  }

  /** The held frames, the usage one with `cost` set to `chargedNano` (0 when nothing was charged). */
  release(chargedNano: bigint | undefined): string {
    if (!this.held) return '';
    const out = this.held.map((h) => (h.path ? frameWithCost(h.frame, h.path, chargedNano ?? 0n) : h.frame)).join('');
    this.held = null;
    return out;
  }
}
