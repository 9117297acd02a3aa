/**
 * A translator composed of two (issue 31 item 2): `<client>--<middle>` outside, `<middle>--<upstream>`
 * inside, for a pair no folder translates directly (the registry builds one when it finds a middle
 * format). The request goes client -> middle -> upstream; an answer comes back upstream -> middle ->
 * client; a stream is chained event by event: every frame the inner translator writes in the middle
 * format is parsed again (the one SSE parser) and pushed into the outer one, and the inner's normal end
 * is the middle format's own terminator. Usage, delivered text and upstream errors are the inner
 * translator's: it reads the upstream's own report, so the bill is what the upstream reported (cache
 * reads and writes included) and is normalised once, not again from the middle format.
 */
import type { CompiledOffering } from '../config/types.js';
import type { GatewayError } from '../errors.js';
import { SseParser, type SseEvent } from './sse.js';
import type { StreamStep, StreamTranslator, TokenUsage, Translator, TranslatorFactory, TranslatorOptions } from './types.js';

/** The parsed events of `frames` (frames written in the middle format). */
function reparse(parser: SseParser, frames: readonly string[]): SseEvent[] {
  const events: SseEvent[] = [];
  for (const frame of frames) events.push(...parser.push(frame));
  return events;
}

/** One stream through both translators. */
class ChainedStream implements StreamTranslator {
  private readonly parser = new SseParser();
  private finished = false;
  /** The outer translator's own closing frame of a broken stream (e.g. numbered in its sequence). */
  readonly errorFrame?: (error: GatewayError) => string;

  constructor(private readonly inner: StreamTranslator, private readonly outer: StreamTranslator, private readonly middleDone: string | null) {
    if (outer.errorFrame) this.errorFrame = (error) => outer.errorFrame!(error);
  }

  push(event: SseEvent): StreamStep {
    if (this.finished) return { frames: [] };
    const step = this.inner.push(event);
    if (step.error) return { frames: [], error: step.error };
    const middle = [...step.frames];
    // The middle format's own end (e.g. chat's `[DONE]`) is what the outer translator finishes on.
    if (step.done && this.middleDone) middle.push(this.middleDone);
    const frames: string[] = [];
    let done = false;
    for (const piece of reparse(this.parser, middle)) {
      const out = this.outer.push(piece);
      frames.push(...out.frames);
      if (out.error) return { frames, error: out.error };
      done ||= out.done === true;
    }
    if (step.done || done) this.finished = true;
    return { frames, done: step.done === true || done };
  }

  usage(): TokenUsage | null { return this.inner.usage(); }
  deliveredText(): string { return this.inner.deliveredText(); }
  deliveredLength(): number { return this.inner.deliveredLength(); }
}

/** Everything the chain needs of its two halves. */
export interface ChainParts {
  outer: TranslatorFactory;
  inner: TranslatorFactory;
  /** The frame that ends a normal stream in the middle format, or null when it has none. */
  middleDone: string | null;
}

/**
 * The chained translator's factory. The inner translator is created up front from the middle request
 * (so its refusals are 400s before anything is reserved), which needs the offering the request is
 * prepared for (`options.offering`); without one the chain cannot be built.
 */
export function chainTranslators(parts: ChainParts): TranslatorFactory {
  return (clientBody: Record<string, unknown>, options: TranslatorOptions): Translator => {
    const offering = options.offering;
    if (!offering) throw new Error('a chained translator needs the offering the request is prepared for (TranslatorOptions.offering)');
    const outer = parts.outer(clientBody, options);
    const middleBody = outer.request(clientBody, offering) as Record<string, unknown>;
    const inner = parts.inner(middleBody, options);
    return {
      request: (body: Record<string, unknown>, served: CompiledOffering, files) => inner.request(outer.request(body, served, files) as Record<string, unknown>, served, files),
      response(upstream, clientModel, headers, outputs) {
        const middle = inner.response(upstream, clientModel, headers, outputs);
        const answer = outer.response(middle.body, clientModel, headers, outputs);
        return { ...answer, usage: middle.usage, outputText: middle.outputText };
      },
      stream: (clientModel) => new ChainedStream(inner.stream(clientModel), outer.stream(clientModel), parts.middleDone),
      error: (status, body, headers) => inner.error(status, body, headers),
    };
  };
}
