/**
 * A compact o200k_base token counter: the same counts as gpt-tokenizer's `countTokens` (test/unit/bpe.test.ts
 * checks it against gpt-tokenizer on generated and real text), in about 4 MB instead of about 60.
 *
 * gpt-tokenizer keeps its 200,000 ranks as a JavaScript module of string literals, turned at load into
 * an array of strings and a Map from string to rank: about 15 MB of live heap, and some 60 MB of
 * resident memory once the 2.2 MB module's parsing and the construction's garbage are counted. Counting
 * needs neither: here every token's bytes sit in one Uint8Array (1.4 MB), with their offsets (0.8 MB)
 * and an open-addressing hash table of token ids (2 MB), built from the package's own
 * `data/o200k_base.tiktoken` in about 40 ms, the first time a count is asked for (not at start).
 * Pre-tokenization finds the pieces of gpt-tokenizer's own split pattern (src/o200k-split.ts).
 *
 * Byte-pair merging is tiktoken's (merge the adjacent pair of lowest rank until none is a token), as
 * gpt-tokenizer does it. One quirk of gpt-tokenizer is reproduced so that counts never change: it
 * looks a valid UTF-8 byte run up by its decoded text, and the decoder drops one leading byte-order
 * mark (U+FEFF), so a run that starts with one is looked up without it, and no token that starts with
 * one is ever found (tiktoken would count such text one or two tokens lower).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mergeCount } from './bpe-merge.js';
import { TextCountCache } from './count-cache.js';
import { o200kPieceEnd } from './o200k-split.js';

/** Every token's bytes, where each starts, and a hash table from bytes to token id (= rank). */
interface Vocabulary {
  /** The tokens' bytes back to back, in rank order. */
  readonly bytes: Uint8Array;
  /** Token `r` is bytes[offsets[r], offsets[r + 1]). */
  readonly offsets: Uint32Array;
  /** Open addressing, linear probing: a token id, or -1 for an empty slot. */
  readonly slots: Int32Array;
  readonly mask: number;
}

const BASE64: Int8Array = (() => {
  const table = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
})();
const SPACE = 0x20;
const NEWLINE = 0x0a;

/** FNV-1a over bytes[start, end). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** A file's bytes, piece by piece: a fresh pass over the whole file each call. */
export type FilePieces = () => Iterable<Uint8Array>;

/**
 * Reads a `.tiktoken` file (one `<base64 bytes> <rank>` line per token, ranks 0, 1, 2, ... in order)
 * into a Vocabulary. Two passes over the file's pieces (count, then fill), so that nothing but the
 * result is allocated: the 3.6 MB file itself is never held whole (a buffer of it stayed resident
 * until the next full collection, issue 8's memory target).
 */
export function parseTiktoken(pieces: FilePieces): Vocabulary {
  let tokens = 0;
  let total = 0;
  let digits = 0;
  let inToken = true;
  for (const piece of pieces()) {
    for (let i = 0; i < piece.length; i++) {
      const c = piece[i]!;
      if (c === NEWLINE) { total += (digits * 6) >> 3; digits = 0; tokens += 1; inToken = true; } else if (c === SPACE) inToken = false;
      else if (inToken && BASE64[c]! >= 0) digits += 1;
    }
  }
  const bytes = new Uint8Array(total);
  const offsets = new Uint32Array(tokens + 1);
  let size = 1;
  while (size < tokens * 2.5) size *= 2;
  const slots = new Int32Array(size).fill(-1);
  const mask = size - 1;
  let id = 0;
  let out = 0;
  let acc = 0;
  let bits = 0;
  let rank = 0;
  inToken = true;
  for (const piece of pieces()) {
    for (let i = 0; i < piece.length && id < tokens; i++) {
      const c = piece[i]!;
      if (inToken) {
        if (c === SPACE) { inToken = false; rank = 0; continue; }
        const v = BASE64[c]!;
        if (v < 0) continue; // '=' padding
        acc = ((acc << 6) | v) & 0xffffff;
        bits += 6;
        if (bits >= 8) { bits -= 8; bytes[out++] = (acc >> bits) & 0xff; }
      } else if (c !== NEWLINE) {
        rank = rank * 10 + c - 0x30;
      } else {
        if (rank !== id) throw new Error(`o200k_base.tiktoken: rank ${rank} on line ${id + 1} (expected ranks in order)`);
        let slot = hashBytes(bytes, offsets[id]!, out) & mask;
        while (slots[slot] !== -1) slot = (slot + 1) & mask;
        slots[slot] = id;
        id += 1;
        offsets[id] = out;
        inToken = true;
        acc = 0;
        bits = 0;
      }
    }
  }
  if (id !== tokens) throw new Error(`o200k_base.tiktoken: ${id} of ${tokens} lines read on the second pass (the file changed)`);
  return { bytes, offsets, slots, mask };
}

/** A file read in 64 KiB pieces through one reused buffer. */
function filePieces(path: string): FilePieces {
  return function* pieces() {
    const fd = openSync(path, 'r');
    try {
      const buffer = new Uint8Array(64 * 1024);
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) yield buffer.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  };
}

/** The token id of exactly bytes[start, end), or -1. */
function exactRank(v: Vocabulary, bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  for (let slot = hashBytes(bytes, start, end) & v.mask; ; slot = (slot + 1) & v.mask) {
    const id = v.slots[slot]!;
    if (id === -1) return -1;
    const from = v.offsets[id]!;
    if (v.offsets[id + 1]! - from !== length) continue;
    let k = 0;
    while (k < length && v.bytes[from + k] === bytes[start + k]) k++;
    if (k === length) return id;
  }
}

/** The token id of text[start, end) as bytes (its char codes), or -1 when it is not a token or not ASCII. */
function asciiRank(v: Vocabulary, text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return -1;
    h = Math.imul(h ^ c, 0x01000193);
  }
  const length = end - start;
  for (let slot = (h >>> 0) & v.mask; ; slot = (slot + 1) & v.mask) {
    const id = v.slots[slot]!;
    if (id === -1) return -1;
    const from = v.offsets[id]!;
    if (v.offsets[id + 1]! - from !== length) continue;
    let k = 0;
    while (k < length && v.bytes[from + k] === text.charCodeAt(start + k)) k++;
    if (k === length) return id;
  }
}

const startsWithBom = (b: Uint8Array, start: number, end: number): boolean =>
  end - start >= 3 && b[start] === 0xef && b[start + 1] === 0xbb && b[start + 2] === 0xbf;

/** Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), as gpt-tokenizer checks it. */
function isValidUtf8(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end;) {
    const b1 = b[i]!;
    let n: number;
    let cp: number;
    if (b1 <= 0x7f) { i += 1; continue; }
    if ((b1 & 0xe0) === 0xc0) { if (b1 <= 0xc1) return false; n = 2; cp = b1 & 0x1f; } else if ((b1 & 0xf0) === 0xe0) { n = 3; cp = b1 & 0x0f; } else if ((b1 & 0xf8) === 0xf0) { if (b1 > 0xf4) return false; n = 4; cp = b1 & 0x07; } else return false;
    if (i + n > end) return false;
    for (let j = 1; j < n; j++) {
      const c = b[i + j]!;
      if ((c & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    if ((n === 3 && cp < 0x800) || (n === 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += n;
  }
  return true;
}

/** The rank gpt-tokenizer finds for bytes[start, end) while merging (see the BOM quirk above), or -1. */
function mergeRank(v: Vocabulary, b: Uint8Array, start: number, end: number): number {
  if (startsWithBom(b, start, end) && isValidUtf8(b, start, end)) {
    start += 3;
    if (start === end || startsWithBom(b, start, end)) return -1;
  }
  return exactRank(v, b, start, end);
}

/** How many tokens byte-pair merging makes of bytes[0, length) (tiktoken's byte_pair_merge, as gpt-tokenizer runs it). */
function mergedCount(v: Vocabulary, b: Uint8Array, length: number): number {
  return mergeCount(length, (from, to) => { const r = mergeRank(v, b, from, to); return r < 0 ? Infinity : r; });
}

let vocabulary: Vocabulary | null = null;

/** The o200k vocabulary, read on first use (about 40 ms, 4 MB). */
function o200k(): Vocabulary {
  if (!vocabulary) {
    const file = createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken');
    vocabulary = parseTiktoken(filePieces(file));
  }
  return vocabulary;
}

/** True once the vocabulary has been read (for tests and diagnostics). */
export function o200kLoaded(): boolean {
  return vocabulary !== null;
}

/** Merge counts of pieces that are not tokens themselves: 4096 pieces a generation, so at most 8192 (as gpt-tokenizer's merge cache). */
const merges = new TextCountCache({ generation: 4096, weigh: () => 1 });

/**
 * A piece as the merge cache may keep it: V8 makes a slice of 13 characters or more a view into the
 * whole string, so a cached piece would keep its whole prompt alive (300 prompts of 96,000
 * characters, each with one long word not a token, held 27 MB after a full collection). JSON.parse
 * makes a new flat string; `(' ' + piece).slice(1)` would be a view again. A shorter slice is a copy.
 */
function ownPiece(piece: string): string {
  return piece.length < 13 ? piece : (JSON.parse(JSON.stringify(piece)) as string);
}
const encoder = new TextEncoder();
let scratch = new Uint8Array(1024);

/** No lone surrogate (String.prototype.isWellFormed, which ES2022's typings lack). */
function isWellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c >= 0xdc00) return false;
    const next = text.charCodeAt(i + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
    i += 1;
  }
  return true;
}

/**
 * Tokens of the piece text[start, end) of the split (a word, a number, a run of spaces or
 * punctuation). The usual pieces (one ASCII character, an ASCII word that is a token) are looked up
 * in place; only the others are cut out as a string of their own.
 */
function pieceCount(v: Vocabulary, text: string, start: number, end: number): number {
  if (end - start === 1 && text.charCodeAt(start) < 0x80) return 1;
  if (asciiRank(v, text, start, end) >= 0) return 1; // most pieces of most text: an ASCII word that is a token
  const piece = text.slice(start, end);
  const cached = merges.get(piece);
  if (cached !== undefined) return cached;
  if (scratch.length < piece.length * 3) scratch = new Uint8Array(piece.length * 3 + 1024);
  const { written } = encoder.encodeInto(piece, scratch);
  // gpt-tokenizer looks the whole piece up by its text, which no token's text equals when the piece
  // holds a lone surrogate or starts with U+FEFF (see above).
  if (piece.charCodeAt(0) !== 0xfeff && isWellFormed(piece) && exactRank(v, scratch, 0, written) >= 0) return 1;
  const count = mergedCount(v, scratch, written);
  merges.set(ownPiece(piece), count);
  return count;
}

/** Tokens of `text` with the o200k_base encoding, special-token strings counted as plain text. */
export function countO200kTokens(text: string): number {
  if (text.length === 0) return 0;
  const v = o200k();
  let total = 0;
  for (let start = 0; start < text.length;) {
    const end = o200kPieceEnd(text, start);
    total += pieceCount(v, text, start, end);
    start = end;
  }
  return total;
}
