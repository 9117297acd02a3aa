/**
 * The token usage of a transcription (CreateTranscriptionResponseJson and TranscriptTextDoneEvent:
 * `usage` of type `tokens`, TranscriptTextUsageTokens): input tokens, audio and text alike, billed at
 * the input price; output at the output price. Duration usage (whisper-1) or none is null: those
 * models are billed by the measured duration.
 */
import { GatewayError } from '../../errors.js';
import type { TokenUsage } from '../types.js';

/** The upstream's 502 for a transcription answer the gateway cannot read. */
export function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed transcription answer (${what}).`);
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The token usage of a `usage: {type: tokens}` object; null for duration usage or none. */
export function transcriptionUsage(usage: unknown): TokenUsage | null {
  if (!usage || typeof usage !== 'object' || (usage as { type?: unknown }).type !== 'tokens') return null;
  const { input_tokens: input, output_tokens: output } = usage as Record<string, unknown>;
  if (!count(input) || !count(output)) throw malformed('usage');
  return { input, output, cachedInput: 0, cacheWrite: 0, reasoning: 0 };
}
