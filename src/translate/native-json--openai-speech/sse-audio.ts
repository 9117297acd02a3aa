/**
 * OpenAI's speech answer with `stream_format: sse` (createSpeech; CreateSpeechResponseStreamEvent):
 * `speech.audio.delta` events, each a chunk of the audio file in base64, then one `speech.audio.done`
 * whose `usage` (input_tokens, output_tokens, total_tokens; all required) is what the vendor bills.
 * The chunks joined are the file a plain answer would have been. An answer without its done event was
 * cut, and one whose usage is not whole counts cannot be billed exactly: both are the upstream's fault
 * (502, nothing charged), never a file billed at a guess.
 */
import { GatewayError } from '../../errors.js';
import { SseParser } from '../sse.js';
import type { TokenUsage } from '../types.js';

/** The audio and the vendor's usage of a whole SSE speech answer. */
export interface SpeechSse { audio: Buffer; usage: TokenUsage }

const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed speech stream (${what}).`);
}

/** The usage of a `speech.audio.done` event: text input tokens and audio output tokens. */
function doneUsage(usage: unknown): TokenUsage {
  const { input_tokens: input, output_tokens: output } = (usage ?? {}) as Record<string, unknown>;
  if (!count(input) || !count(output)) throw malformed('usage');
  return { input, output, cachedInput: 0, cacheWrite: 0, reasoning: 0 };
}

/** Reads a whole SSE speech answer; throws a 502 GatewayError when it is cut or malformed. */
export function readSpeechSse(text: string): SpeechSse {
  const chunks: Buffer[] = [];
  let usage: TokenUsage | null = null;
  // The final newline ends a last event the vendor did not follow with a blank line.
  for (const event of new SseParser().push(`${text}\n\n`)) {
    let data: { type?: unknown; audio?: unknown; usage?: unknown };
    try { data = JSON.parse(event.data) as typeof data; } catch { throw malformed('an event that is not JSON'); }
    if (usage) throw malformed('an event after speech.audio.done');
    if (data.type === 'speech.audio.delta') {
      if (typeof data.audio !== 'string') throw malformed('a delta without audio');
      chunks.push(Buffer.from(data.audio, 'base64'));
    } else if (data.type === 'speech.audio.done') {
      usage = doneUsage(data.usage);
    } else if ((data as { error?: unknown }).error !== undefined || data.type === 'error') {
      throw new GatewayError('upstream_error', 'The upstream provider failed while producing the audio.');
    }
  }
  if (!usage) throw malformed('no speech.audio.done');
  return { audio: Buffer.concat(chunks), usage };
}
