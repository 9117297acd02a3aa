/**
 * openai-chat client to openai-chat upstream: the identity translation, plus the metering rules of
 * spec 4.1: the upstream is always asked for stream usage, and the usage chunk reaches the client
 * only if the client asked for it. Model ids are the gateway's own on the client side.
 */
import type { CompiledOffering } from '../../config/types.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';
import { generatedText, readChatUsage, type ChatDelta, type ChatUsage } from './chunks.js';
import { ChatStream } from './stream.js';

/** Creates the identity translator for one request. */
export function createOpenaiChatToOpenaiChat(clientBody: Record<string, unknown>, options?: TranslatorOptions): Translator {
  const streamOptions = clientBody.stream_options as { include_usage?: boolean } | null | undefined;
  const clientWantsUsage = streamOptions?.include_usage === true;
  const dialect = options?.usage ?? null;
  return {
    request(body: Record<string, unknown>, offering: CompiledOffering) {
      const upstream: Record<string, unknown> = { ...body, model: offering.upstreamModel };
      // Spec 4.1 rule 1: streams are metered like JSON answers, so the upstream always reports usage.
      // A vendor that reports it unasked refuses the option (issue 32: its manifest says `stream: always`).
      if (body.stream === true && dialect?.stream === 'always') delete upstream.stream_options;
      else if (body.stream === true) upstream.stream_options = { ...(streamOptions ?? {}), include_usage: true };
      return upstream;
    },
    response(upstream, clientModel) {
      const text: string[] = [];
      for (const choice of (upstream.choices as Array<{ message?: ChatDelta }> | undefined) ?? []) generatedText(choice.message, text);
      return { body: { ...upstream, model: clientModel }, usage: readChatUsage(upstream.usage as ChatUsage, dialect), outputText: text.join('') };
    },
    stream: (clientModel) => new ChatStream(clientModel, clientWantsUsage, dialect),
    error: mapUpstreamError,
  };
}
