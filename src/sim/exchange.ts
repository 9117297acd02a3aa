/**
 * The contract between the simulator's HTTP server and its wire formats: a route gets one parsed
 * request (after latency and status faults were applied) and answers with JSON or a list of
 * server-sent events, which `writeEvents` sends with the chunk-level faults.
 */
import type http from 'node:http';
import type { SimFault } from './faults.js';

/** How a stream ends: the format's error event (given how many events were sent) and its terminator. */
export interface StreamEnd {
  /** A string for SSE; bytes for a binary framing (AWS event-stream frames). */
  error: (sent: number) => string | Uint8Array;
  /** Written after the last event of a complete stream, e.g. `data: [DONE]\n\n`; nothing when absent. */
  done?: string;
  /** The last event is the stream's terminator (message_stop, response.completed): fault omit_done leaves it out. */
  finalEvent?: boolean;
  /** The broken event of fault malformed_after_chunks; without it that fault writes nothing. */
  malformed?: string | Uint8Array;
}

/** The broken chat chunk of fault malformed_after_chunks (not valid JSON). */
export const MALFORMED_CHAT_EVENT = 'data: {"choices":[{"delta":{"content": oops\n\n';

/** One request as a route sees it. */
export interface Exchange {
  readonly headers: http.IncomingHttpHeaders;
  readonly raw: string;
  /** The parsed JSON body; `undefined` when `parsed` is false. */
  readonly body: unknown;
  readonly parsed: boolean;
  /** The fault that applies to this request (empty when none). */
  readonly fault: SimFault;
  sendJson(status: number, body: unknown, headers?: http.OutgoingHttpHeaders): void;
  /** Sends `events` as a 200 event stream, applying the stream faults (see `writeEvents`). */
  stream(events: readonly (string | Uint8Array)[], end: StreamEnd, headers?: http.OutgoingHttpHeaders): Promise<void>;
}

/** A wire-format endpoint of the simulator. */
export interface SimRoute {
  /** The error body (in the format's shape) and extra headers for a `fault.status` (and its `error_code`). */
  faultResponse(status: number, raw: string, fault: SimFault): { body: unknown; headers: http.OutgoingHttpHeaders };
  /** The route takes assistant prefills (messages format): fault reject_prefill matches its prefill requests. */
  readonly prefill?: boolean;
  handle(x: Exchange): Promise<void>;
}

/** What `writeEvents` needs from the connection. */
export interface StreamSink {
  res: http.ServerResponse;
  isGone(): boolean;
  /** Resolves when the response closes. */
  closed: Promise<void>;
  sleep(ms: number): Promise<void>;
  /** Resolves at the next `POST /__sim/release` (or reset, or close): fault `hold_last_chunk`. */
  released(): Promise<void>;
}

/** A named server-sent event: `event: <name>\ndata: <json>\n\n`. */
export const namedEvent = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * Writes a 200 event stream: `events` in order (one write each), then `end.done`, or the fault's cut or
 * error event. Headers go out at once; first_event_delay_ms, chunk_delay_ms and stall_after_chunks /
 * stall_ms sleep before events; malformed_after_chunks inserts `end.malformed`; omit_done leaves out the
 * terminator of a complete stream; end_delay_ms holds the end of the body.
 */
export async function writeEvents(
  sink: StreamSink, events: readonly (string | Uint8Array)[], end: StreamEnd, fault: SimFault, headers: http.OutgoingHttpHeaders = {},
): Promise<void> {
  const { res, isGone, closed, sleep } = sink;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
  const truncate = fault.truncate_after_chunks;
  const errorAfter = fault.error_after_chunks;
  const mode = truncate !== undefined && (errorAfter === undefined || truncate < errorAfter) ? 'truncate' : errorAfter !== undefined ? 'error' : 'done';
  const omitDone = mode === 'done' && fault.omit_done === true;
  const complete = omitDone && end.finalEvent ? events.length - 1 : events.length;
  const limit = Math.min(complete, mode === 'truncate' ? truncate! : mode === 'error' ? errorAfter! : complete);
  let flushed: Promise<void> = Promise.resolve();
  if (fault.first_event_delay_ms) await sleep(fault.first_event_delay_ms);
  for (let i = 0; i <= limit; i++) {
    if (fault.chunk_delay_ms && i > 0 && i < limit) await sleep(fault.chunk_delay_ms);
    if (fault.stall_ms !== undefined && i === fault.stall_after_chunks) await sleep(fault.stall_ms);
    if (isGone()) return;
    let ok = true;
    if (end.malformed !== undefined && i === fault.malformed_after_chunks) ok = res.write(end.malformed);
    if (i < limit) {
      // Each event is its own write (flushed as written); only a truncation waits for the last one.
      if (mode === 'truncate' && i === limit - 1) flushed = new Promise<void>((done) => { ok = res.write(events[i]!, () => done()) && ok; });
      else ok = res.write(events[i]!) && ok;
    }
    if (!ok) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
  }
  if (isGone()) return;
  const done = omitDone ? '' : end.done ?? '';
  if (mode === 'truncate') {
    await Promise.race([flushed, closed]);
    res.destroy();
  } else if (mode === 'error') {
    res.end(end.error(limit));
  } else if (fault.end_delay_ms) {
    res.write(done);
    await sleep(fault.end_delay_ms);
    if (!isGone()) res.end();
  } else {
    res.end(done);
  }
}
