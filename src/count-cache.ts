/**
 * Remembered token counts of texts. A chat client resends the whole conversation with every turn
 * (an agent's system prompt, tool definitions and earlier tool results run to hundreds of thousands
 * of characters), and a request's input estimate counts all of it on the request's path: about
 * 12 ns a character here, 5 ms for 400,000 characters, with the event loop blocked meanwhile. A text
 * seen before is answered from here instead.
 *
 * A long text is looked up by a fingerprint (its length and characters sampled along it), then
 * compared whole with the text remembered under it: a Map keyed by the text itself hashes all of it
 * at every lookup (a new string each request), 1.4 ns a character, where the comparison is a memory
 * compare. Two texts with one fingerprint replace each other (a miss, never a wrong count).
 *
 * Bounded in two generations: when the recent one holds `generation` (in characters by default, or
 * in the given weight of its texts), it becomes the older one and the older one is dropped whole; a
 * text found in the older one moves to the recent one. At most twice `generation` is kept alive.
 * (Evicting the oldest entry one at a time instead, by deleting the first key of one Map, cost about
 * 2.6 µs an insertion once the Map had filled: V8 keeps deleted entries as holes that the next look
 * for the first key walks past.)
 */

/** What is remembered under a key: the text itself (to compare) and its count. */
interface Entry { text: string; count: number; }

/** Characters sampled along a long text for its fingerprint. */
const SAMPLES = 32;

/** A long text's key: its length, then SAMPLES characters at even steps from its start to its end. */
function fingerprint(text: string): string {
  const step = (text.length - 1) / (SAMPLES - 1);
  const codes = new Array<number>(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) codes[i] = text.charCodeAt(Math.round(i * step));
  return `${text.length}:${String.fromCharCode(...codes)}`;
}

/** Counts remembered for texts, bounded by weight (see above). */
export class TextCountCache {
  private recent = new Map<string, Entry>();
  private older = new Map<string, Entry>();
  private recentWeight = 0;

  private readonly generation: number;
  private readonly weigh: (text: string) => number;
  private readonly fingerprintFrom: number;

  /**
   * `generation`: the weight of one generation; `weigh`: a text's weight (its length by default);
   * `fingerprintFrom`: the length from which a text is looked up by its fingerprint (never by default).
   */
  constructor(options: { generation: number; weigh?: (text: string) => number; fingerprintFrom?: number }) {
    this.generation = options.generation;
    this.weigh = options.weigh ?? ((text) => text.length);
    this.fingerprintFrom = options.fingerprintFrom ?? Infinity;
  }

  private keyOf(text: string): string {
    return text.length < this.fingerprintFrom ? text : fingerprint(text);
  }

  /** The remembered count of `text`, or undefined. */
  get(text: string): number | undefined {
    const key = this.keyOf(text);
    // Under a fingerprint the remembered text must be compared; under the text itself the Map has.
    const compare = key !== text;
    const recent = this.recent.get(key);
    if (recent !== undefined) return !compare || recent.text === text ? recent.count : undefined;
    const older = this.older.get(key);
    if (older === undefined || (compare && older.text !== text)) return undefined;
    this.older.delete(key);
    this.remember(key, older);
    return older.count;
  }

  /**
   * Remembers `count` for `text` (a text that outweighs a whole generation is not kept). The text is
   * kept as given: pass a string of its own, not a slice of a longer one, which V8 would keep whole
   * (src/bpe.ts copies its pieces for this).
   */
  set(text: string, count: number): void {
    this.remember(this.keyOf(text), { text, count });
  }

  private remember(key: string, entry: Entry): void {
    const weight = this.weigh(entry.text);
    if (weight > this.generation) return;
    if (this.recentWeight + weight > this.generation) {
      this.older = this.recent;
      this.recent = new Map();
      this.recentWeight = 0;
    }
    this.recent.set(key, entry);
    this.recentWeight += weight;
  }

  /** The weight kept alive (both generations). */
  weight(): number {
    let total = this.recentWeight;
    for (const entry of this.older.values()) total += this.weigh(entry.text);
    return total;
  }
}
