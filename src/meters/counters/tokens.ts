/**
 * `tokens`: o200k tokens of every string, by the project's tokenizer (src/tokenize.ts), for
 * routes that bill tokens the upstream does not report. A value that is already tokenized (a
 * nonempty array of token ids, or a list of such arrays, as the embeddings route takes) counts its
 * token ids.
 */
import { countTextTokens } from '../../tokenize.js';
import { stringsOf, type Counter } from './counter.js';

const isTokenId = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isTokenArray = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every(isTokenId);

/** The token ids of a pre-tokenized value, or null when it is not one. */
function tokenIds(value: unknown): number | null {
  if (isTokenArray(value)) return value.length;
  if (Array.isArray(value) && value.length > 0 && value.every(isTokenArray)) return value.reduce((sum: number, ids: number[]) => sum + ids.length, 0);
  return null;
}

/** Counts o200k tokens over every string in every value (each string tokenized on its own), and token ids as they are. */
export const tokens: Counter = {
  name: 'tokens',
  unit: 'token',
  count: (values) => {
    let total = 0;
    values.forEach((value, i) => {
      const ids = tokenIds(value);
      if (ids !== null) total += ids;
      else for (const s of stringsOf('tokens', value, i)) total += countTextTokens(s);
    });
    return total;
  },
};
