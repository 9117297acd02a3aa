/**
 * The outage tests' TCP proxy (test/helpers/tcp-proxy.ts) must hold a server's replies back while
 * its client does not read them, as a direct connection would, instead of buffering them all.
 */
import { connect, createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const REPLY = Buffer.alloc(64 * 1024 * 1024, 1);

let cleanup: Array<() => unknown> = [];
afterEach(async () => { for (const c of cleanup.reverse()) await c(); cleanup = []; });

describe('startTcpProxy', () => {
  it('pauses the server side while the client reads nothing, and passes every byte once it reads', async () => {
    let serverSide: Socket | undefined;
    const server = createServer((socket) => { serverSide = socket; socket.on('error', () => undefined); socket.end(REPLY); });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => new Promise((ok) => server.close(ok)));
    const proxy: TcpProxy = await startTcpProxy({ host: '127.0.0.1', port: (server.address() as { port: number }).port });
    cleanup.push(() => proxy.close());
    const client = connect(proxy.port, '127.0.0.1');
    client.pause();
    cleanup.push(() => client.destroy());
    await once(client, 'connect');
    await sleep(500);
    // Without back-pressure the proxy reads the whole reply at once; with it, most of it still waits
    // in the server's own buffer.
    expect(serverSide!.writableLength).toBeGreaterThan(REPLY.length / 2);
    let received = 0;
    client.on('data', (chunk: Buffer) => { received += chunk.length; });
    client.resume();
    await once(client, 'end');
    expect(received).toBe(REPLY.length);
  });
});
