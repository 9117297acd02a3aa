/**
 * Loopback-only servers for the SSRF fetcher tests (issue 11 item 7): a canary that counts every
 * connection it receives (it must never be reached), a small HTTP server whose routes the tests
 * declare, a socket spy counting every outgoing connection attempt, and an injectable resolver.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { vi, type MockInstance } from 'vitest';
import type { Resolver } from '../../../src/upstream/fetch/index.js';

/** A TCP listener on 127.0.0.1 (and on ::1 at the same port when the host has IPv6 loopback). */
export interface Canary { port: number; connections(): number; close(): Promise<void>; }

function listen(server: net.Server, port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, host, () => resolve(true));
  });
}

function closeAll(servers: readonly net.Server[]): Promise<void> {
  return Promise.all(servers.map((s) => new Promise<void>((ok) => {
    if (s instanceof http.Server) s.closeAllConnections();
    if (s.listening) s.close(() => ok()); else ok();
  }))).then(() => undefined);
}

/** Starts the canary: every connection it accepts is counted and closed. */
export async function startCanary(): Promise<Canary> {
  let count = 0;
  const make = (): net.Server => net.createServer((socket) => { count++; socket.destroy(); });
  const v4 = make();
  await listen(v4, 0, '127.0.0.1');
  const port = (v4.address() as AddressInfo).port;
  const v6 = make();
  const servers = (await listen(v6, port, '::1')) ? [v4, v6] : [v4];
  return { port, connections: () => count, close: () => closeAll(servers) };
}

/** A request handler of the test HTTP server. */
export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** An HTTP server on loopback (127.0.0.1 unless told) with routes by path; records what each request carried. */
export interface TestServer {
  port: number;
  requests: Array<{ url: string; headers: http.IncomingHttpHeaders }>;
  connections(): number;
  close(): Promise<void>;
}

export async function startServer(routes: Record<string, Route>, host = '127.0.0.1'): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (route) route(req, res);
    else res.writeHead(404).end('not found');
  });
  server.on('connection', () => { connections++; });
  if (!(await listen(server, 0, host))) throw new Error(`cannot listen on ${host}`);
  return { port: (server.address() as AddressInfo).port, requests, connections: () => connections, close: () => closeAll([server]) };
}

/** A port on 127.0.0.1 with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await listen(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  await closeAll([server]);
  return port;
}

/** A resolver answering from a table (a name absent from it does not exist), with its calls recorded. */
export function tableResolver(table: Record<string, readonly string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string): Promise<{ address: string; family: number }[]> => {
    calls.push(hostname);
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

/** Counts every outgoing socket connection attempt in this worker (net and tls both go through it). */
export function spyOnConnect(): MockInstance<net.Socket['connect']> {
  return vi.spyOn(net.Socket.prototype, 'connect');
}

/** Bypass spellings; `P` is the canary's port. Every one resolves to loopback or is not http(s) at all. */
export const BYPASSES = (P: number): string[] => [
  'http://2130706433/', `http://2130706433:${P}/`, `https://2130706433:${P}/`,
  'http://0x7f000001/', `https://0x7f000001:${P}/`, `https://0x7f000001.:${P}/`,
  'http://0177.0.0.1/', `https://0177.0.0.1:${P}/`, `https://0x7f.0.0.1:${P}/`, `https://0x7f.1:${P}/`,
  'http://127.1/', `https://127.1:${P}/`, `https://127.0.1:${P}/`, `https://127.0.0.1.:${P}/`, `https://127.0.0.1:${P}/`,
  'http://0/', `https://0:${P}/`, 'http://0.0.0.0/', `https://0.0.0.0:${P}/`,
  'http://[::1]/', `https://[::1]:${P}/`, `https://[0:0:0:0:0:0:0:1]:${P}/`, `https://[::]:${P}/`,
  'http://[::ffff:127.0.0.1]/', `https://[::ffff:127.0.0.1]:${P}/`, 'http://[::ffff:7f00:1]/', `https://[::ffff:7f00:1]:${P}/`,
  `https://[0:0:0:0:0:ffff:7f00:0001]:${P}/`, `https://[::127.0.0.1]:${P}/`, `https://[64:ff9b::7f00:1]:${P}/`, `https://[2002:7f00:1::]:${P}/`,
  'http://localhost/', `https://localhost:${P}/`, 'http://LOCALHOST./', `https://LOCALHOST.:${P}/`, `https://LocalHost:${P}/`,
  `https://%6c%6f%63%61%6c%68%6f%73%74:${P}/`, `https://spoofed.localhost:${P}/`,
  'http://localtest.me/', `https://localtest.me:${P}/`, `https://six.test:${P}/`, `https://both.test:${P}/`,
  `http://%31%32%37.0.0.1:${P}/`, `https://\uff11\uff12\uff17.\uff10.\uff10.\uff11:${P}/`, `https://\u2460\u2461\u2466.0.0.1:${P}/`,
  `https://allowed.test@127.0.0.1:${P}/`, `https://allowed.test:443@127.0.0.1:${P}/`, `https://@127.0.0.1:${P}/`,
  `http://127.0.0.1:${P}#@allowed.test/`, `https://127.0.0.1:${P}\\@allowed.test/`, `https://127.0.0.1:${P}?@allowed.test/`,
  'file:///etc/passwd', `gopher://127.0.0.1:${P}/_GET%20/`, 'data:text/plain,hello', `ftp://127.0.0.1:${P}/`,
  `ws://127.0.0.1:${P}/`, `wss://127.0.0.1:${P}/`, 'javascript:alert(1)', `blob:https://127.0.0.1:${P}/x`,
  `HTTPS://127.0.0.1:${P}/`, ` https://127.0.0.1:${P}/ `, `https:127.0.0.1:${P}/`, `https:/\\127.0.0.1:${P}/`,
];

/** What the bypass names resolve to (through an injected resolver: every one to loopback). */
export const BYPASS_NAMES: Record<string, readonly string[]> = {
  localhost: ['127.0.0.1'], 'localhost.': ['127.0.0.1'], 'localtest.me': ['127.0.0.1'], 'allowed.test': ['127.0.0.1'],
  'spoofed.localhost': ['127.0.0.1'], 'six.test': ['::1'], 'both.test': ['127.0.0.1', '::1'],
};
