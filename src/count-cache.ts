/**
 * Remembered token counts of long texts. A chat client resends the whole conversation with every
 * turn (an agent's system prompt, tool definitions and earlier tool results run to hundreds of
 * thousands of characters), and a request's input estimate counts all of it on the request's path:
 * about 12 ns a character here, 5 ms for 400,000 characters, with the event loop blocked meanwhile.
 * A text seen before is answered from here instead (a Map lookup compares the strings: well under
 * a microsecond for such a text).
 *
 * Bounded in two generations: when the recent one holds `generation` (in characters by default, or
 * in the given weight of its texts), it becomes the older one and the older one is dropped whole; a
 * text found in the older one moves to the recent one. At most twice `generation` is kept alive.
 * (Evicting the oldest entry one at a time instead, by deleting the first key of one Map, cost about
 * 2.6 µs an insertion once the Map had filled: V8 keeps deleted entries as holes that the next look
 * for the first key walks past.)
 */
export class TextCountCache {
  private recent = new Map<string, number>();
  private older = new Map<string, number>();
  private recentWeight = 0;

  constructor(readonly generation: number, private readonly weigh: (text: string) => number = (text) => text.length) {}

  /** The remembered count of `text`, or undefined. */
  get(text: string): number | undefined {
    const recent = this.recent.get(text);
    if (recent !== undefined) return recent;
    const older = this.older.get(text);
    if (older !== undefined) {
      this.older.delete(text);
      this.set(text, older);
    }
    return older;
  }

  /** Remembers `count` for `text` (a text that outweighs a whole generation is not kept). */
  set(text: string, count: number): void {
    const weight = this.weigh(text);
    if (weight > this.generation) return;
    if (this.recentWeight + weight > this.generation) {
      this.older = this.recent;
      this.recent = new Map();
      this.recentWeight = 0;
    }
    this.recent.set(text, count);
    this.recentWeight += weight;
  }

  /** The weight kept alive (both generations). */
  weight(): number {
    let total = this.recentWeight;
    for (const text of this.older.keys()) total += this.weigh(text);
    return total;
  }
}
