/**
 * The stream framings an upstream answers in (DESIGN.md: one parser per framing), behind one shape:
 * bytes in, the events the stream translators read out. Server-sent events go through the one SSE
 * parser; AWS event-stream frames (`application/vnd.amazon.eventstream`, issue 32 item 2) through the
 * one event-stream parser, each frame checked by its CRCs and given the SSE event shape (`toSseEvent`).
 * A corrupt frame is not an exception here: the events before it are returned with a clean
 * `upstream_error` that ends the client's stream in its own format.
 */
import { StringDecoder } from 'node:string_decoder';
import type { UpstreamAnswerKind } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { EventStreamParser, toSseEvent } from '../../translate/eventstream.js';
import { SseParser, type SseEvent } from '../../translate/sse.js';

/** One stream's parser: the events completed by a piece, and the error that ends the stream if the piece broke it. */
export interface StreamFraming {
  push(chunk: Buffer): { events: SseEvent[]; error?: GatewayError };
}

class SseFraming implements StreamFraming {
  private readonly parser = new SseParser();
  // StringDecoder keeps a character split between two pieces for the next, like TextDecoder's stream
  // mode, at about a third of its cost per stream (TextDecoder opens an ICU converter per instance).
  private readonly decoder = new StringDecoder('utf8');

  push(chunk: Buffer): { events: SseEvent[] } {
    return { events: this.parser.push(this.decoder.write(chunk)) };
  }
}

class EventStreamFraming implements StreamFraming {
  private readonly parser = new EventStreamParser();
  private broken = false;

  push(chunk: Buffer): { events: SseEvent[]; error?: GatewayError } {
    if (this.broken) return { events: [] };
    const { frames, error } = this.parser.read(chunk);
    const events = frames.map(toSseEvent);
    if (!error) return { events };
    this.broken = true;
    return { events, error: new GatewayError('upstream_error', `The upstream stream was corrupt (${error.message}).`) };
  }
}

/** The parser for an operation's answer kind: event-stream frames, or server-sent events (every other streaming kind). */
export function framingFor(kind: UpstreamAnswerKind): StreamFraming {
  return kind === 'event-stream' ? new EventStreamFraming() : new SseFraming();
}
