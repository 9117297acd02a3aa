/**
 * The simulator's chat-completions `logprobs` (OpenAI's shape: `{content: [{token, logprob, bytes,
 * top_logprobs}], refusal}`). The simulator samples nothing, so every piece of its answer is certain
 * (logprob 0); the `top_logprobs` alternatives follow it at fixed, lower log probabilities. One entry
 * per stream piece (a word with its leading whitespace), the unit the simulator streams in.
 */

/** One token's log probability, as OpenAI reports it. */
export interface SimTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

/** A choice's `logprobs`; `content` is null for a tool-call answer. */
export interface SimLogprobs { content: SimTokenLogprob[] | null; refusal: null }

/** Alternatives offered after the chosen token, in order. */
const ALTERNATIVES = [' sim', ' lorem', ' ipsum', ' dolor', ' amet'];

const bytesOf = (token: string): number[] => [...Buffer.from(token, 'utf8')];

/** The logprobs of a text answer streamed as `pieces`, with `top` alternatives per piece (0 to 20). */
export function logprobsOf(pieces: readonly string[], top: number): SimLogprobs {
  const content = pieces.map((token) => {
    const alternatives = Array.from({ length: Math.max(0, top - 1) }, (_, i) => {
      const alt = `${ALTERNATIVES[i % ALTERNATIVES.length]!}${i >= ALTERNATIVES.length ? String(i) : ''}`;
      return { token: alt, logprob: -(i + 1) * 2.5, bytes: bytesOf(alt) };
    });
    const chosen = { token, logprob: 0, bytes: bytesOf(token) };
    return { ...chosen, top_logprobs: top > 0 ? [chosen, ...alternatives] : [] };
  });
  return { content, refusal: null };
}
