/** Shared by translators of named-event streams (responses, messages): one parsed event or the error it is. */
import { GatewayError } from '../errors.js';
import type { SseEvent } from './sse.js';

/** A parsed event with its type (the data's `type`, else the SSE event name). */
export interface NamedEvent { type: string; data: Record<string, unknown>; }

/** Parses an event's JSON data; a malformed event is an upstream error (the stream ends). */
export function parseNamedEvent(event: SseEvent): NamedEvent | GatewayError {
  try {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    return { type: (data.type as string | undefined) ?? event.event ?? '', data };
  } catch {
    return new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.');
  }
}
