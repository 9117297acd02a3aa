import { createServer, type Server } from 'node:http';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/cancel.js';

describe('Cancellation', () => {
  it('calls each listener once, in order, with the reason set, on the first abort only', () => {
    const c = new Cancellation();
    const calls: string[] = [];
    c.addEventListener('abort', () => calls.push(`a:${String(c.reason)}`));
    c.addEventListener('abort', () => calls.push('b'), { once: true });
    expect(c.aborted).toBe(false);
    c.abort('gone');
    c.abort('again');
    expect(calls).toEqual(['a:gone', 'b']);
    expect(c.aborted).toBe(true);
    expect(c.reason).toBe('gone');
  });

  it('aborts with an AbortError DOMException when no reason is given', () => {
    const c = new Cancellation();
    c.abort();
    expect(c.reason).toBeInstanceOf(DOMException);
    expect((c.reason as DOMException).name).toBe('AbortError');
  });

  it('forgets a removed listener, and never calls one added after the abort', () => {
    const c = new Cancellation();
    const calls: string[] = [];
    const removed = (): void => { calls.push('removed'); };
    c.addEventListener('abort', removed);
    c.addEventListener('abort', () => calls.push('kept'));
    c.removeEventListener('abort', removed);
    c.abort();
    c.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['kept']);
  });

  it('gives a real AbortSignal that follows it, whether asked for before or after the abort', () => {
    const before = new Cancellation();
    const signal = before.signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal.aborted).toBe(false);
    before.abort('x');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('x');
    expect(before.signal).toBe(signal);

    const after = new Cancellation();
    after.abort('y');
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe('y');
  });
});

describe('Cancellation as an undici request signal', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Answers the headers, then never ends the body: only an abort ends the request.
    server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.write('partial'); });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  it('aborts a request before its answer, and a body being read, with its reason', async () => {
    const pool = new Pool(url);
    try {
      const early = new Cancellation();
      early.abort(new Error('client left before the headers'));
      await expect(pool.request({ method: 'GET', path: '/', signal: early as unknown as AbortSignal })).rejects.toThrow('client left before the headers');

      const late = new Cancellation();
      const response = await pool.request({ method: 'GET', path: '/', signal: late as unknown as AbortSignal });
      expect(response.statusCode).toBe(200);
      const reading = response.body.text();
      late.abort(new Error('client left mid-body'));
      await expect(reading).rejects.toThrow('client left mid-body');
    } finally {
      await pool.destroy();
    }
  });
});
