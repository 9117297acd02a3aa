/**
 * The one server-sent-events parser (WHATWG "event stream interpretation"). Incremental: feed it
 * decoded text in arbitrary pieces; it yields complete events. Lines end in LF, CRLF or CR; `data`
 * lines of one event are joined with LF; comment lines (":") are ignored; a leading U+FEFF is dropped.
 */

/** One dispatched event. `event` is absent when the stream did not name one. */
export interface SseEvent { event?: string; data: string; id?: string; }

/** Incremental parser; one per stream. */
export class SseParser {
  /**
   * The start of a line not ended yet, as the pieces it came in. Only new text is searched for line
   * ends: searching the whole buffered line again on every piece (and copying it whole to do so) took
   * 180 ms of the event loop for one 3 MB event (a streamed image's base64) arriving in 16 KB pieces.
   */
  private partial: string[] = [];
  /** The event's data lines: the first alone (the usual event has one), the others after it. */
  private firstData: string | null = null;
  private moreData: string[] = [];
  private event: string | undefined;
  private id: string | undefined;
  private pendingCr = false;
  private atStart = true;

  /** Feeds text; returns the events completed by it. One byte-order mark opening the stream is ignored. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let chunk = text;
    if (this.atStart && chunk.length > 0) {
      this.atStart = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.pendingCr = false;
    // Line ends are found with indexOf (native) rather than a loop over every character; the next CR
    // is looked up again only once passed, so a piece without CRs is searched for one once.
    let start = 0;
    let cr = chunk.indexOf('\r');
    for (;;) {
      const lf = chunk.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = chunk.indexOf('\r', start);
      const end = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
      if (end < 0) break;
      this.line(this.lineEndingAt(chunk, start, end), events);
      start = end + 1;
      if (end === cr) {
        if (start === chunk.length) this.pendingCr = true;
        else if (chunk.charCodeAt(start) === 10) start++;
      }
    }
    if (start < chunk.length) this.partial.push(start === 0 ? chunk : chunk.slice(start));
    return events;
  }

  /** The whole line that ends at `end` of `chunk`: the pieces before it, then chunk[start, end). */
  private lineEndingAt(chunk: string, start: number, end: number): string {
    const tail = chunk.slice(start, end);
    if (this.partial.length === 0) return tail;
    this.partial.push(tail);
    const line = this.partial.join('');
    this.partial = [];
    return line;
  }

  /** True when a partial event or line is buffered (a stream cut mid-event). */
  get hasPartial(): boolean {
    return this.partial.length > 0 || this.firstData !== null;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.firstData !== null) {
        const data = this.moreData.length === 0 ? this.firstData : [this.firstData, ...this.moreData].join('\n');
        const event: SseEvent = { data };
        if (this.event !== undefined) event.event = this.event;
        if (this.id !== undefined) event.id = this.id;
        out.push(event);
        this.firstData = null;
        if (this.moreData.length > 0) this.moreData = [];
      }
      this.event = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      if (this.firstData === null) this.firstData = value;
      else this.moreData.push(value);
    }
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

/** Frames one event for the wire: `event:` line when named, one `data:` line per line of data. */
export function formatSse(data: string, event?: string): string {
  const head = event ? `event: ${event}\n` : '';
  return `${head}data: ${data.split('\n').join('\ndata: ')}\n\n`;
}
