/**
 * The o200k_base pre-tokenizer (the split of text into pieces before byte-pair merging), written out
 * by hand. It finds exactly the pieces that gpt-tokenizer's pattern finds with a global exec() loop
 * (test/unit/o200k-split.test.ts compares the two on generated text of every script):
 *
 *   1 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?
 *   2 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:...as above...))?
 *   3 \p{N}{1,3}
 *   4  ?[^\s\p{L}\p{N}]+[\r\n/]*
 *   5 \s*[\r\n]+
 *   6 \s+(?!\S)
 *   7 \s+
 *
 * Why not the pattern itself: V8 matches its Unicode classes quickly in a one-byte (Latin-1) string,
 * but three to five times slower once the string holds a single character above U+00FF (an em-dash,
 * any CJK or Cyrillic text), and a request's input estimate splits its whole prompt on the request's
 * path. Here each code point's class is read from a table, filled 256 code points at a time (from
 * the same regular-expression classes, so the engine's Unicode version decides) the first time a
 * block is met (about 80 µs a block): 64 KB for the Basic Multilingual Plane, 256 bytes per other
 * block met (1 MB and 0.2 s of filling, once per process, if text met every one).
 */

/** Code point classes (never 0: the tables below hold 0 where a block is not filled yet). */
const OTHER = 1;
/** Lu, Lt: upper-case letters (the first letter class only). */
const UPPER = 2;
/** Ll: lower-case letters (the second letter class only). */
const LOWER = 3;
/** Lm, Lo: letters in both letter classes. */
const LETTER = 4;
/** M: marks, in both letter classes but not \p{L} (so also in the prefix and punctuation classes). */
const MARK = 5;
const NUMBER = 6;
/** \s other than \r and \n. */
const SPACE = 7;
const NEWLINE = 8;

const bit = (cls: number): number => 1 << cls;
/** [^\r\n\p{L}\p{N}]: the optional character before a word. */
const PREFIX = bit(OTHER) | bit(MARK) | bit(SPACE);
/** [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
const UPPERS = bit(UPPER) | bit(LETTER) | bit(MARK);
/** [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
const LOWERS = bit(LOWER) | bit(LETTER) | bit(MARK);
/** [^\s\p{L}\p{N}] */
const PUNCTUATION = bit(OTHER) | bit(MARK);
const WHITESPACE = bit(SPACE) | bit(NEWLINE);
/** Either letter class. */
const LETTERS = UPPERS | LOWERS;

/** The class of each code point of the Basic Multilingual Plane; 0 where its block is not filled yet. */
const bmp = new Uint8Array(0x10000);
/** The classes of the other planes' code points, by block of 256, filled when first met. */
const astral: Array<Uint8Array | undefined> = [];

/** The class of one code point, from the regular-expression classes the pattern uses. */
function classify(cp: number): number {
  const c = String.fromCodePoint(cp);
  if (c === '\r' || c === '\n') return NEWLINE;
  if (/^\s$/u.test(c)) return SPACE;
  if (/^\p{N}$/u.test(c)) return NUMBER;
  if (/^[\p{Lu}\p{Lt}]$/u.test(c)) return UPPER;
  if (/^\p{Ll}$/u.test(c)) return LOWER;
  if (/^[\p{Lm}\p{Lo}]$/u.test(c)) return LETTER;
  if (/^\p{M}$/u.test(c)) return MARK;
  return OTHER;
}

/** The classes of the 256 code points from `first`. */
function classifyBlock(first: number, into: Uint8Array, at: number): Uint8Array {
  for (let k = 0; k < 0x100; k++) into[at + k] = classify(first + k);
  return into;
}

/** The class of code point `cp` (a lone surrogate is a code point of its own: OTHER). */
function classOf(cp: number): number {
  if (cp < 0x10000) return bmp[cp] || classifyBlock(cp & ~0xff, bmp, cp & ~0xff)[cp]!;
  const block = astral[cp >> 8] ?? (astral[cp >> 8] = classifyBlock(cp & ~0xff, new Uint8Array(0x100), 0));
  return block[cp & 0xff]!;
}

/** The class of the code point at `i`. */
function classAt(text: string, i: number): number {
  return classOf(text.codePointAt(i)!);
}

/** UTF-16 units of the code point at `i`. */
function widthAt(text: string, i: number): number {
  return text.codePointAt(i)! > 0xffff ? 2 : 1;
}

/** Where the run of code points in `classes` that starts at `i` ends. */
function runEnd(text: string, i: number, classes: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0xd800) {
      // Not a surrogate: the code unit is the code point (the common case, kept short).
      if ((classes & bit(classOf(c))) === 0) break;
      i += 1;
      continue;
    }
    const cp = text.codePointAt(i)!;
    if ((classes & bit(classOf(cp))) === 0) break;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/** The end of `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d` (either case) at `i`, or `i`. */
function contractionEnd(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return i + 2; // s t m d
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) return i + 3; // ll ve re
  return i;
}

/**
 * Alternative 1 without its prefix: [uppers]*[lowers]+ at `i`, or -1. The greedy upper run gives
 * back code points until a lower-class one follows it: the code point after the run if it is
 * lower-class, else the run's last code point that is in both classes (Lm, Lo, M); the lower run
 * then takes all it can from there.
 */
function uppersThenLowers(text: string, i: number): number {
  let lastBoth = -1;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    const classes = bit(classOf(cp));
    if ((UPPERS & classes) === 0) {
      if ((LOWERS & classes) !== 0) return runEnd(text, i, LOWERS);
      break;
    }
    if ((LOWERS & classes) !== 0) lastBoth = i;
    i += cp > 0xffff ? 2 : 1;
  }
  return lastBoth < 0 ? -1 : runEnd(text, lastBoth, LOWERS);
}

/** Alternative 2 without its prefix: [uppers]+[lowers]* at `i`, or -1. */
function upperThenLowers(text: string, i: number): number {
  const upperEnd = runEnd(text, i, UPPERS);
  return upperEnd === i ? -1 : runEnd(text, upperEnd, LOWERS);
}

/** The code point at `i` is a letter or a mark (in either letter class). */
function isLetterAt(text: string, i: number): boolean {
  return i < text.length && (LETTERS & bit(classAt(text, i))) !== 0;
}

/** Alternative 1's core at `i`, else alternative 2's: -1 only when neither matches. */
function letterRunEnd(text: string, i: number): number {
  const end = uppersThenLowers(text, i);
  return end >= 0 ? end : upperThenLowers(text, i);
}

/**
 * Alternatives 1 or 2 (a word, with its optional prefix and contraction) at `at`, or -1. The
 * pattern's order is 1 after the prefix, 1 without it, 2 after the prefix, 2 without it; which of
 * them can match depends on the first code point's class.
 */
function wordEnd(text: string, at: number, cls: number): number {
  const classes = bit(cls);
  if ((classes & LETTERS) === 0) {
    // Punctuation or a space can only be a word's prefix (a number or a line break not even that).
    if ((classes & PREFIX) === 0) return -1;
    const next = at + widthAt(text, at);
    return isLetterAt(text, next) ? contractionEnd(text, letterRunEnd(text, next)) : -1;
  }
  // A letter is never a prefix: 1 or 2 without it. A mark is both: all four, in order.
  if (cls !== MARK) return contractionEnd(text, letterRunEnd(text, at));
  const next = at + widthAt(text, at);
  let end = next < text.length ? uppersThenLowers(text, next) : -1;
  if (end < 0) end = uppersThenLowers(text, at);
  if (end < 0 && next < text.length) end = upperThenLowers(text, next);
  if (end < 0) end = upperThenLowers(text, at);
  return contractionEnd(text, end);
}

/** Alternatives 5 to 7 at `at` (a run of whitespace from `at`). */
function whitespaceEnd(text: string, at: number): number {
  const end = runEnd(text, at, WHITESPACE);
  for (let k = end - 1; k >= at; k--) if (classAt(text, k) === NEWLINE) return k + 1; // \s*[\r\n]+
  if (end === text.length || end - 1 === at) return end; // \s+(?!\S), else \s+
  return end - 1; // \s+(?!\S) gives back the last space, which then leads the next piece
}

const isAsciiUpper = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isAsciiLower = (c: number): boolean => c >= 0x61 && c <= 0x7a;

/**
 * The usual piece of English text or code, an ASCII word with an optional ASCII prefix (` the`,
 * `.Net`, `Hello`), found without the class tables; -1 when the piece is anything else or may go
 * on past the ASCII (the general scan then decides). In ASCII the upper class is A-Z and the lower
 * class a-z, with no letter in both, so alternatives 1 and 2 end after the lower-case run that
 * follows the upper-case run.
 */
function asciiWordEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  let i = at;
  // The prefix: not a letter, digit, \r or \n (and ASCII, so one code unit).
  if (!isAsciiUpper(first) && !isAsciiLower(first)) {
    if (first >= 0x80 || (first >= 0x30 && first <= 0x39) || first === 0x0a || first === 0x0d) return -1;
    i += 1;
  }
  const upperStart = i;
  while (i < text.length && isAsciiUpper(text.charCodeAt(i))) i += 1;
  while (i < text.length && isAsciiLower(text.charCodeAt(i))) i += 1;
  if (i === upperStart || (i < text.length && text.charCodeAt(i) >= 0x80)) return -1;
  return contractionEnd(text, i);
}

/**
 * Where the o200k piece that starts at `at` ends: the pieces of `text` are [0, e1), [e1, e2), ...
 * (every position starts one: the pattern leaves no gap).
 */
export function o200kPieceEnd(text: string, at: number): number {
  const ascii = asciiWordEnd(text, at);
  if (ascii >= 0) return ascii;
  const cls = classAt(text, at);
  const word = wordEnd(text, at, cls);
  if (word >= 0) return word;
  if (cls === NUMBER) {
    let end = at;
    for (let n = 0; n < 3 && end < text.length && classAt(text, end) === NUMBER; n++) end += widthAt(text, end);
    return end;
  }
  if (cls === OTHER || (text.charCodeAt(at) === 0x20 && at + 1 < text.length && (PUNCTUATION & bit(classAt(text, at + 1))) !== 0)) {
    let end = runEnd(text, cls === OTHER ? at : at + 1, PUNCTUATION);
    while (end < text.length && (text.charCodeAt(end) === 0x0d || text.charCodeAt(end) === 0x0a || text.charCodeAt(end) === 0x2f)) end += 1;
    return end;
  }
  return whitespaceEnd(text, at);
}
