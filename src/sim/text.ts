/**
 * Helpers shared by every wire format of the simulator: the deterministic reply text within a token
 * budget, schema-driven tool arguments, web-search triggers, ids and a small answer memo. No I/O.
 */
import { createHash } from 'node:crypto';
import { countTextTokens } from '../tokenize.js';

/** Hard cap of every output budget (also the budget when the client sets none). */
export const MAX_OUTPUT_TOKENS = 4096;
/** Characters of the user text quoted in the reply (and used as a web-search query). */
const QUOTE_CHARS = 200;
const FILLER = ' lorem';

export type Rec = Record<string, unknown>;
export const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Splits text into stream pieces: each word with its leading whitespace. */
export const splitWords = (text: string): string[] => text.match(/\s*\S+/g) ?? [];
/** Hex SHA-256 of a request body; seeds every id of its answer. */
export const bodyHash = (raw: string): string => createHash('sha256').update(raw).digest('hex');
/** The effective output budget: the client's value capped at `MAX_OUTPUT_TOKENS` (the cap when it sets none). */
export const outputBudget = (requested: number | null | undefined): number => Math.min(requested ?? MAX_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS);
/** The first `QUOTE_CHARS` characters (code points) of a text. */
export const quote = (text: string): string => Array.from(text).slice(0, QUOTE_CHARS).join('');

/**
 * A deterministic value satisfying a JSON-schema property (required properties of objects are filled
 * in; `anyOf`/`oneOf` take their first branch that is not null, `allOf` its first, a local `$ref`
 * resolves against `root`'s `$defs` / `definitions`; arrays get `minItems` items).
 */
export function sampleValue(schema: unknown, depth = 0, root: unknown = schema): unknown {
  if (!isRecord(schema) || depth > 16) return 'sim';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (typeof schema.$ref === 'string') return sampleValue(resolveRef(root, schema.$ref), depth + 1, root);
  const branches = [schema.anyOf, schema.oneOf, schema.allOf].find(Array.isArray) as unknown[] | undefined;
  if (branches && branches.length > 0) {
    const branch = branches.find((b) => !(isRecord(b) && b.type === 'null')) ?? branches[0];
    return sampleValue(branch, depth + 1, root);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'number': case 'integer': return 1;
    case 'boolean': return true;
    case 'array': {
      const count = typeof schema.minItems === 'number' ? Math.min(schema.minItems, 3) : 0;
      return Array.from({ length: count }, () => sampleValue(schema.items, depth + 1, root));
    }
    case 'null': return null;
    case 'object': return depth < 8 ? sampleObject(schema, depth + 1, root) : {};
    default: return 'sim';
  }
}

/** The schema a local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`) names in `root`; undefined when it names none. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let at: unknown = root;
  for (const part of ref.slice(1).split('/').filter((p) => p !== '')) at = isRecord(at) ? at[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  return at;
}

/** An object with every required property of `schema` filled in by `sampleValue`. */
export function sampleObject(schema: unknown, depth = 0, root: unknown = schema): Rec {
  const out: Rec = {};
  if (!isRecord(schema)) return out;
  const props = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) if (typeof name === 'string') out[name] = sampleValue(props[name], depth, root);
  return out;
}

/** The sentence every natural reply ends with (issue 31 item 13: a short answer, not max_tokens of filler). */
const CLOSING = '. The built-in simulator answers every request deterministically, with a short reply and exact usage.';

/** The whole natural reply to `userText` (trimmed, quoted up to 200 characters). */
export const naturalReply = (userText: string): string => `This is a simulated reply to: ${quote(userText.trim())}${CLOSING}`;

/**
 * A text within `budget` tokens: whole when it fits (`cut` false; a natural stop, issue 31 item 13:
 * answers no longer fill max_tokens), otherwise its longest word prefix that fits (`cut` true).
 */
export function fitText(whole: string, budget: number): { text: string; tokens: number; cut: boolean } {
  const wholeTokens = countTextTokens(whole);
  if (wholeTokens <= budget) return { text: whole, tokens: wholeTokens, cut: false };
  const pieces = splitWords(whole);
  let lo = 0;
  let hi = pieces.length - 1; // largest k whose prefix fits; k = 0 (empty) always does
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (countTextTokens(pieces.slice(0, mid).join('')) <= budget) lo = mid; else hi = mid - 1;
  }
  const text = pieces.slice(0, lo).join('');
  return { text, tokens: countTextTokens(text), cut: true };
}

/** The natural reply (`naturalReply`) within `budget` tokens (`fitText`). */
export const replyText = (userText: string, budget: number): { text: string; tokens: number; cut: boolean } => fitText(naturalReply(userText), budget);

/**
 * The reply of fault `answer_words`: exactly `count` words, the first words of `This is a simulated
 * reply to: <user text>` padded with " lorem"; `cut` is false (a normal stop whatever the budget).
 */
export function wordsReply(userText: string, count: number): { text: string; tokens: number; cut: boolean } {
  const sentence = splitWords(`This is a simulated reply to: ${quote(userText.trim())}`);
  const text = sentence.slice(0, count).join('') + FILLER.repeat(Math.max(0, count - sentence.length));
  return { text, tokens: countTextTokens(text), cut: false };
}

/** `wordsReply` when `words` is set, else `replyText` within `budget`. */
export const sizedReply = (userText: string, budget: number, words: number | undefined) =>
  (words === undefined ? replyText(userText, budget) : wordsReply(userText, words));

/** The memo key of an answer: the raw body, prefixed by the `answer_words` fault when set. */
export const answerKey = (rawBody: string, words: number | undefined): string => (words === undefined ? rawBody : `${words}\u0000${rawBody}`);

/** Built-in web searches a prompt triggers: 0 without the word "search", else 2 with the word "twice", else 1. */
export function webSearchCount(userText: string): number {
  if (!/\bsearch\b/i.test(userText)) return 0;
  return /\btwice\b/i.test(userText) ? 2 : 1;
}

/** Text of a content value: a string, or the `text` of every part carrying one, joined by a space. */
export function partsText(content: unknown, partTypes: readonly string[]): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is Rec => isRecord(p) && partTypes.includes(p.type as string) && typeof p.text === 'string')
    .map((p) => p.text as string).join(' ');
}

/** Splits a string into `pieces` consecutive non-empty slices (fewer when it is shorter). */
export function slices(text: string, pieces: number): string[] {
  const step = Math.max(1, Math.ceil(text.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += step) out.push(text.slice(i, i + step));
  return out;
}

/** A small insertion-ordered memo (benchmarks repeat bodies; tokenizing long prompts is not free). */
export class Memo<T> {
  private readonly entries = new Map<string, T>();
  constructor(private readonly maxEntries = 256, private readonly maxKeyLength = 16 * 1024) {}

  /** The memoised value for `key`, computing and storing it on a miss. */
  get(key: string, compute: () => T): T {
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const value = compute();
    if (key.length <= this.maxKeyLength) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, value);
    }
    return value;
  }
}
