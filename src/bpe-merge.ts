/**
 * Byte-pair merging (tiktoken's byte_pair_merge): the parts start as single bytes; the adjacent pair
 * of lowest rank is merged, the leftmost of equal ones first, until no adjacent pair is a token. Only
 * the number of parts left is asked for (the piece's token count).
 *
 * Two ways to the same merges. A short piece (most are a few bytes) scans its pairs for the lowest at
 * each step, as tiktoken does. A long one (a word of a script written without spaces: Thai, Japanese
 * kana, a long identifier) would take time quadratic in its length that way: 20,000 characters of Thai
 * took 0.36 s of the event loop on a request's path. It keeps its pairs in a heap instead, ordered by
 * rank and then position, so that each merge costs a logarithm.
 */

/** The rank of bytes [from, to) as one token, or Infinity when they are not one. */
export type RankOf = (from: number, to: number) => number;

/**
 * Longest piece merged by scanning. Measured per piece (random letters, unique pieces): the heap is
 * faster from about 64 bytes of Thai and from about 128 bytes of Latin letters.
 */
const SCAN_MAX = 96;

/** How many tokens merging makes of `length` bytes. */
export function mergeCount(length: number, rankOf: RankOf): number {
  return length <= SCAN_MAX ? mergeByScan(length, rankOf) : mergeByHeap(length, rankOf);
}

/** tiktoken's loop: find the lowest rank among the current pairs, merge it, update its two neighbours. */
export function mergeByScan(length: number, rankOf: RankOf): number {
  const starts: number[] = [];
  const ranks: number[] = [];
  for (let i = 0; i <= length; i++) {
    starts.push(i);
    ranks.push(i < length - 1 ? rankOf(i, i + 2) : Infinity);
  }
  while (starts.length > 1) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < ranks.length - 1; i++) if (ranks[i]! < lowest) { lowest = ranks[i]!; at = i; }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    ranks.splice(at, 1);
    ranks[at] = at + 2 < starts.length ? rankOf(starts[at]!, starts[at + 2]!) : Infinity;
    if (at > 0) ranks[at - 1] = rankOf(starts[at - 1]!, starts[at + 1]!);
  }
  return starts.length - 1;
}

/**
 * A binary min-heap of pairs: key = rank * 2^24 + the left part's start (exact in a double for
 * ranks below 2^29 and starts below 2^24), so the lowest rank comes first and the leftmost among equals.
 */
class PairHeap {
  private keys = new Float64Array(64);
  private ends = new Int32Array(64);
  size = 0;
  /** The key and end of the pair the last pop() removed. */
  key = 0;
  end = 0;

  push(key: number, end: number): void {
    if (this.size === this.keys.length) this.grow();
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent]! <= key) break;
      this.keys[i] = this.keys[parent]!;
      this.ends[i] = this.ends[parent]!;
      i = parent;
    }
    this.keys[i] = key;
    this.ends[i] = end;
  }

  /** Removes the lowest pair; its key and end are left in `key` and `end`. */
  pop(): void {
    this.key = this.keys[0]!;
    this.end = this.ends[0]!;
    const lastKey = this.keys[--this.size]!;
    const lastEnd = this.ends[this.size]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && this.keys[child + 1]! < this.keys[child]!) child += 1;
      if (this.keys[child]! >= lastKey) break;
      this.keys[i] = this.keys[child]!;
      this.ends[i] = this.ends[child]!;
      i = child;
    }
    this.keys[i] = lastKey;
    this.ends[i] = lastEnd;
  }

  private grow(): void {
    const keys = new Float64Array(this.keys.length * 2);
    keys.set(this.keys);
    const ends = new Int32Array(this.ends.length * 2);
    ends.set(this.ends);
    this.keys = keys;
    this.ends = ends;
  }
}

const POSITION = 2 ** 24;

/**
 * The same merges with the pairs in a heap. The parts are a linked list over their start offsets
 * (`next[s]` is where the part starting at `s` ends; `length` ends the last). A pair in the heap whose
 * parts have changed since it was pushed is skipped when it comes out: it is current only while its
 * left part still starts a part and the part after it still ends where the pair did.
 */
export function mergeByHeap(length: number, rankOf: RankOf): number {
  if (length >= POSITION) throw new RangeError(`a piece of ${length} bytes is too long to merge`);
  const next = new Int32Array(length + 1);
  const previous = new Int32Array(length + 1);
  const isStart = new Uint8Array(length + 1).fill(1);
  const heap = new PairHeap();
  for (let i = 0; i < length; i++) {
    next[i] = i + 1;
    previous[i] = i - 1;
    if (i + 1 < length) pushPair(heap, rankOf, i, i + 2);
  }
  let parts = length;
  while (heap.size > 0) {
    heap.pop();
    const start = heap.key % POSITION;
    const end = heap.end;
    const middle = next[start]!;
    if (isStart[start] === 0 || middle >= length || next[middle] !== end) continue;
    // Merge [start, middle) and [middle, end).
    isStart[middle] = 0;
    next[start] = end;
    if (end < length) previous[end] = start;
    parts -= 1;
    if (start > 0) pushPair(heap, rankOf, previous[start]!, end);
    if (end < length) pushPair(heap, rankOf, start, next[end]!);
  }
  return parts;
}

function pushPair(heap: PairHeap, rankOf: RankOf, from: number, to: number): void {
  const rank = rankOf(from, to);
  if (rank !== Infinity) heap.push(rank * POSITION + from, to);
}
