/**
 * A TCP proxy on loopback between the gateway and a server (PostgreSQL, Redis), which a test cuts
 * and restores to play an outage: `cut()` drops every open connection and stops listening (new
 * connections are refused), `restore()` listens again on the same port. `loseReplies()` keeps
 * forwarding what clients send but drops what the server answers, until the next cut: a request
 * that ran whose answer never came back.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  port: number;
  /** How many connections it accepted so far. */
  accepted(): number;
  loseReplies(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy to `target` on a free loopback port. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let repliesLost = false;
  const onConnection = (client: Socket): void => {
    accepted += 1;
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const drop = (): void => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    // The replies by hand (they may be dropped), with the same back-pressure as pipe(): a client that
    // reads slowly pauses the server's side instead of the proxy buffering without bound.
    upstream.on('data', (chunk: Buffer) => { if (!repliesLost && !client.write(chunk)) upstream.pause(); });
    client.on('drain', () => upstream.resume());
  };
  const listen = (port: number): Promise<Server> => new Promise((ok, fail) => {
    const server = createServer(onConnection);
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => ok(server));
  });
  let server: Server | null = await listen(0);
  const port = (server.address() as { port: number }).port;
  const stop = async (): Promise<void> => {
    const closing = server ? new Promise<void>((ok) => server!.close(() => ok())) : Promise.resolve();
    server = null;
    repliesLost = false;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closing;
  };
  return {
    port,
    accepted: () => accepted,
    loseReplies: () => { repliesLost = true; },
    cut: stop,
    async restore() { if (!server) server = await listen(port); },
    close: stop,
  };
}

/** A proxy in front of the PostgreSQL server of `databaseUrl`, and that URL through the proxy (for a gateway). */
export async function proxyDatabase(databaseUrl: string): Promise<{ proxy: TcpProxy; viaProxy: string }> {
  const real = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) });
  const viaProxy = new URL(databaseUrl);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  return { proxy, viaProxy: viaProxy.toString() };
}
