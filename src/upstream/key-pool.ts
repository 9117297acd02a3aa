/**
 * A provider's credentials used in turn (issue 29 item 2). A key answered 429 rests until its
 * Retry-After (or a backoff) while the others carry on; a key answered 401 or 403 is taken out until
 * the configuration is reloaded (a reload compiles a new pool). Per process, like the circuits.
 */

/** One credential of a pool: its place in `auth.keys` (for logs and metrics, never the value) and the value. */
export interface PoolKey { readonly index: number; readonly location: string; readonly value: string }

/** The keys of one provider, in turn. */
export class KeyPool {
  private readonly keys: PoolKey[];
  private readonly restingUntil: number[];
  private readonly removed: boolean[];
  private cursor = 0;

  /** `values[i]` is the credential found at `locations[i]` (an `env:NAME`); an unset one is left out by the compiler. */
  constructor(values: readonly string[], locations: readonly string[] = values.map((_, i) => `key ${i + 1}`)) {
    this.keys = values.map((value, index) => ({ index, location: locations[index] ?? `key ${index + 1}`, value }));
    this.restingUntil = values.map(() => 0);
    this.removed = values.map(() => false);
  }

  /** How many keys the pool has (removed ones included). */
  get size(): number { return this.keys.length; }

  /** The next usable key in turn, skipping resting and removed ones; null when none is usable at `now`. */
  next(now: number = Date.now()): PoolKey | null {
    for (let step = 0; step < this.keys.length; step++) {
      const i = (this.cursor + step) % this.keys.length;
      if (this.removed[i] || this.restingUntil[i]! > now) continue;
      this.cursor = (i + 1) % this.keys.length;
      return this.keys[i]!;
    }
    return null;
  }

  /** True when some key is usable at `now` (the turn is not taken). */
  hasUsable(now: number = Date.now()): boolean {
    return this.keys.some((_, i) => !this.removed[i] && this.restingUntil[i]! <= now);
  }

  /** A key for a call outside the attempt loop (polling a job the request started): the first not removed, resting or not. */
  any(): PoolKey | null {
    return this.keys.find((_, i) => !this.removed[i]) ?? null;
  }

  /** When the first resting key is back, or null when no key rests (all usable, or all removed). */
  readyAt(): number | null {
    let soonest: number | null = null;
    this.keys.forEach((_, i) => {
      if (this.removed[i] || this.restingUntil[i] === 0) return;
      soonest = soonest === null ? this.restingUntil[i]! : Math.min(soonest, this.restingUntil[i]!);
    });
    return soonest;
  }

  /** The key rests until `untilMs` (a 429's Retry-After, or a backoff). */
  rest(key: PoolKey, untilMs: number): void {
    this.restingUntil[key.index] = Math.max(this.restingUntil[key.index]!, untilMs);
  }

  /** Takes the key out (a 401 or 403); true the first time, so the caller logs it once. */
  remove(key: PoolKey): boolean {
    if (this.removed[key.index]) return false;
    this.removed[key.index] = true;
    return true;
  }

  /** True when every key was taken out (a pool with no keys at all is not exhausted: it sends none). */
  get exhausted(): boolean { return this.keys.length > 0 && this.removed.every(Boolean); }

  /** What a log line or a serialized provider shows of the pool: where its keys come from, never their values. */
  toJSON(): { locations: string[] } & ReturnType<KeyPool['counts']> {
    return { locations: this.keys.map((k) => k.location), ...this.counts() };
  }

  /** Counts for the admin API: usable now, resting, removed. */
  counts(now: number = Date.now()): { usable: number; resting: number; removed: number } {
    let resting = 0;
    let removed = 0;
    this.keys.forEach((_, i) => {
      if (this.removed[i]) removed += 1;
      else if (this.restingUntil[i]! > now) resting += 1;
    });
    return { usable: this.keys.length - resting - removed, resting, removed };
  }
}
