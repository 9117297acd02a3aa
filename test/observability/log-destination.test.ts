/**
 * The log destination (src/observability/log-destination.ts): batched asynchronous writes to a file
 * descriptor, in order, whole across partial writes and a full pipe, bounded, and flushed at exit.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BATCH_MS, BatchedFdDestination, logLinesDropped, type FdWrite } from '../../src/observability/log-destination.js';

interface Call { text: string; done: (err: NodeJS.ErrnoException | null, written: number) => void; length: number }

/** A descriptor that records each write and completes it when the test says (all of it, or part). */
function fakeFd(): { write: FdWrite; calls: Call[]; out: () => string; complete: (i: number, part?: number) => void } {
  const calls: Call[] = [];
  let out = '';
  const write: FdWrite = (_fd, buffer, offset, length, _pos, done) => {
    calls.push({ text: buffer.subarray(offset, offset + length).toString(), done, length });
  };
  return {
    write, calls, out: () => out,
    complete(i, part) {
      const call = calls[i]!;
      const n = part ?? call.length;
      out += Buffer.from(call.text).subarray(0, n).toString();
      call.done(null, n);
    },
  };
}

/** Past one batch's wait. */
const batch = (): Promise<void> => new Promise((ok) => setTimeout(ok, BATCH_MS + 15));
const turn = (): Promise<void> => new Promise((ok) => setImmediate(ok));
const lines = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => `{"n":${from + i}}\n`);

describe('batched log destination', () => {
  const dirs: string[] = [];
  afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }); });

  it('writes the lines of one batch period in one write, in order, across turns of the event loop', async () => {
    const fd = fakeFd();
    const dest = new BatchedFdDestination(1, 1 << 20, fd.write);
    for (const line of lines(0, 25)) dest.write(line);
    await turn();
    for (const line of lines(25, 25)) dest.write(line);
    expect(fd.calls).toHaveLength(0);
    await batch();
    expect(fd.calls).toHaveLength(1);
    expect(fd.calls[0]!.text).toBe(lines(0, 50).join(''));
  });

  it('sends the lines that arrive while a write is in flight together in the next write', async () => {
    const fd = fakeFd();
    const dest = new BatchedFdDestination(1, 1 << 20, fd.write);
    dest.write(lines(0, 1)[0]!);
    await batch();
    for (const line of lines(1, 30)) { dest.write(line); await turn(); }
    expect(fd.calls).toHaveLength(1);
    fd.complete(0);
    expect(fd.calls).toHaveLength(2);
    expect(fd.calls[1]!.text).toBe(lines(1, 30).join(''));
    fd.complete(1);
    expect(fd.out()).toBe(lines(0, 31).join(''));
  });

  it('writes the rest of a batch the descriptor took only part of, then the next batch', async () => {
    const fd = fakeFd();
    const dest = new BatchedFdDestination(1, 1 << 20, fd.write);
    for (const line of lines(0, 10)) dest.write(line);
    await batch();
    dest.write('{"n":"later"}\n');
    fd.complete(0, 7);
    expect(fd.calls[1]!.text).toBe(lines(0, 10).join('').slice(7));
    fd.complete(1);
    fd.complete(2);
    expect(fd.out()).toBe(`${lines(0, 10).join('')}{"n":"later"}\n`);
  });

  it('tries again when the descriptor is full (EAGAIN), losing nothing', async () => {
    const fd = fakeFd();
    const dest = new BatchedFdDestination(1, 1 << 20, fd.write);
    for (const line of lines(0, 3)) dest.write(line);
    await batch();
    fd.calls[0]!.done(Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' }), 0);
    await new Promise((ok) => setTimeout(ok, 120));
    expect(fd.calls).toHaveLength(2);
    fd.complete(1);
    expect(fd.out()).toBe(lines(0, 3).join(''));
  });

  it('drops and counts lines past its bound while the descriptor does not take them', async () => {
    const fd = fakeFd();
    const dest = new BatchedFdDestination(1, 100, fd.write);
    const droppedBefore = logLinesDropped();
    dest.write('x'.repeat(60));
    await batch();
    // One batch in flight; at most 100 characters wait behind it.
    expect(dest.write('a'.repeat(60))).toBe(true);
    expect(dest.write('b'.repeat(60))).toBe(false);
    expect(dest.dropped).toBe(1);
    // The process-wide count behind gateway_log_lines_dropped_total.
    expect(logLinesDropped()).toBe(droppedBefore + 1);
    fd.complete(0);
    fd.complete(1);
    expect(fd.out()).toBe('x'.repeat(60) + 'a'.repeat(60));
  });

  it('writes to a real file, and whatever still waits when the process exits', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-log-'));
    dirs.push(dir);
    const file = join(dir, 'out.log');
    // A child that queues lines and exits in the same turn: nothing was written before the exit.
    const script = `
      import { openSync } from 'node:fs';
      import { BatchedFdDestination } from ${JSON.stringify(join(process.cwd(), 'dist/src/observability/log-destination.js'))};
      const dest = new BatchedFdDestination(openSync(${JSON.stringify(file)}, 'w'), 1 << 20);
      for (let i = 0; i < 1000; i++) dest.write('{"n":' + i + '}\\n');
      process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(readFileSync(file, 'utf8')).toBe(lines(0, 1000).join(''));

    const fd = openSync(join(dir, 'async.log'), 'w');
    const dest = new BatchedFdDestination(fd, 1 << 20);
    for (const line of lines(0, 100)) dest.write(line);
    return new Promise<void>((ok) => dest.flush(() => {
      closeSync(fd);
      expect(readFileSync(join(dir, 'async.log'), 'utf8')).toBe(lines(0, 100).join(''));
      ok();
    }));
  });
});
