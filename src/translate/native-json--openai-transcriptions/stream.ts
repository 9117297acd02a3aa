/**
 * A streamed transcription (createTranscription with `stream: true`; CreateTranscriptionResponseStreamEvent)
 * passed to the client as the vendor sends it: `transcript.text.delta` events (the text as it comes),
 * then `transcript.text.done` with the whole text and `usage` (TranscriptTextUsageTokens), which ends
 * the stream and is what the token meter bills. An `error` event ends it with nothing billed for it.
 */
import { GatewayError } from '../../errors.js';
import { formatSse, type SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage } from '../types.js';
import { upstreamMessage } from '../upstream-error.js';
import { transcriptionUsage } from './usage.js';

/** The stream translator of one streamed transcription. */
export function transcriptionStream(): StreamTranslator {
  let delivered = '';
  let usage: TokenUsage | null = null;
  return {
    push(event: SseEvent): StreamStep {
      let data: { type?: unknown; delta?: unknown; usage?: unknown; error?: unknown };
      try { data = JSON.parse(event.data) as typeof data; } catch {
        return { frames: [], error: new GatewayError('upstream_error', 'The upstream provider sent a malformed transcription event.') };
      }
      if (data.type === 'error' || data.error !== undefined) {
        return { frames: [], error: new GatewayError('upstream_error', upstreamMessage(data) ?? 'The upstream provider failed while transcribing.') };
      }
      if (data.type === 'transcript.text.delta' && typeof data.delta === 'string') delivered += data.delta;
      const frames = [formatSse(event.data)];
      if (data.type !== 'transcript.text.done') return { frames };
      try { usage = transcriptionUsage(data.usage); } catch (error) { return { frames: [], error: error as GatewayError }; }
      return { frames, done: true };
    },
    usage: () => usage,
    deliveredText: () => delivered,
    deliveredLength: () => delivered.length,
  };
}
