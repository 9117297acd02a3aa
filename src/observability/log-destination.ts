/**
 * Where log lines go: a file descriptor (standard output), written asynchronously in batches: the
 * lines of BATCH_MS, and those that arrive while a write is in progress, wait in an array and go out
 * together in one write, joined once. pino's own asynchronous destination wrote once per turn of the
 * event loop, and appended each line to one pending string whose byte length it measured on every
 * line, copying the whole pending batch per line (about 7 KB allocated per access-log line under
 * load; issue 8). At most `maxBytes` wait; past it lines are dropped, not buffered without bound, and
 * counted. What is left is written synchronously when the process exits.
 */
import { write as fsWrite, writeSync } from 'node:fs';

/** Writes `buffer[offset..offset+length)` to `fd`; calls back with the bytes written. */
export type FdWrite = (fd: number, buffer: Buffer, offset: number, length: number, position: null, done: (err: NodeJS.ErrnoException | null, written: number) => void) => void;

/**
 * How long a line waits for others before a write. Each write goes through libuv's thread pool (a
 * thread woken, a completion back on the event loop): one per turn of the event loop still cost a busy
 * gateway about 19 µs a request with the log on against off; one per 10 ms costs it nothing measurable.
 */
export const BATCH_MS = 10;

/** How long to wait before trying again when the descriptor is full (a non-blocking pipe nobody reads). */
const RETRY_MS = 50;

/** Lines dropped by every destination of the process since it started (gateway_log_lines_dropped_total). */
let droppedInProcess = 0;

/** How many log lines this process dropped because its output could not keep up (a counter: it only grows). */
export function logLinesDropped(): number {
  return droppedInProcess;
}

/** Every destination made, flushed at exit (weakly held: one that was dropped has nothing to say). */
const live = new Set<WeakRef<BatchedFdDestination>>();
let exitHookSet = false;

function flushAllAtExit(): void {
  for (const ref of live) ref.deref()?.flushSync();
}

/** A pino destination: `write(line)` per line, batched writes to one descriptor. */
export class BatchedFdDestination {
  private pending: string[] = [];
  private pendingBytes = 0;
  private writing = false;
  private scheduled = false;
  /** Callbacks of flush(), called when the last write ends with nothing left waiting. */
  private drained: Array<() => void> = [];
  /** Lines dropped because `maxBytes` were already waiting. */
  dropped = 0;

  constructor(private readonly fd: number, private readonly maxBytes: number, private readonly writeFd: FdWrite = fsWrite) {
    live.add(new WeakRef(this));
    if (!exitHookSet) { exitHookSet = true; process.once('exit', flushAllAtExit); }
  }

  /** Queues one line (pino passes each with its newline). Sizes are counted in UTF-16 units: a byte per character of an ASCII line. */
  write(line: string): boolean {
    if (this.pendingBytes + line.length > this.maxBytes) {
      this.dropped += 1;
      droppedInProcess += 1;
      return false;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (!this.writing && !this.scheduled) {
      // The lines of the next BATCH_MS go out together.
      this.scheduled = true;
      setTimeout(() => { this.scheduled = false; this.writeBatch(); }, BATCH_MS).unref();
    }
    return true;
  }

  /** Writes what waits now (pino's logger.flush), and calls back once everything is written. */
  flush(done?: (err?: Error) => void): void {
    this.writeBatch();
    if (!done) return;
    if (this.writing) this.drained.push(() => done());
    else done();
  }

  /** Writes every waiting line now, blocking (at exit). A descriptor that stays full loses the rest. */
  flushSync(): void {
    if (this.pending.length === 0) return;
    const buffer = Buffer.from(this.take());
    let offset = 0;
    for (let attempts = 0; offset < buffer.length && attempts < 100; attempts++) {
      try {
        offset += writeSync(this.fd, buffer, offset, buffer.length - offset);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }

  private take(): string {
    const text = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    return text;
  }

  private writeBatch(): void {
    if (this.writing || this.pending.length === 0) return;
    this.writing = true;
    this.writeFrom(Buffer.from(this.take()), 0);
  }

  /** Writes `buffer` from `offset` to its end (a pipe may take part of it), then the next batch. */
  private writeFrom(buffer: Buffer, offset: number): void {
    this.writeFd(this.fd, buffer, offset, buffer.length - offset, null, (err, written) => {
      if (err && err.code === 'EAGAIN') {
        setTimeout(() => this.writeFrom(buffer, offset), RETRY_MS).unref();
        return;
      }
      const next = err ? buffer.length : offset + written;
      if (next < buffer.length) return this.writeFrom(buffer, next);
      // Anything else (a closed descriptor): this batch is lost; later lines still try.
      this.writing = false;
      this.writeBatch();
      if (!this.writing) for (const done of this.drained.splice(0)) done();
    });
  }
}
