/** A loopback webhook receiver for the alerts' tests: keeps what it got, answers `status` (200 by default). */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST as received: its headers and exact body. */
export interface ReceivedAlert { headers: IncomingHttpHeaders; body: string; json: { id: string; type: string; created_at: string; data: Record<string, unknown> } }

/** A started receiver. */
export interface AlertReceiver {
  url: string;
  /** What it accepted (answered 2xx), in order. */
  received: ReceivedAlert[];
  /** Every POST, answered or refused. */
  attempts: number;
  /** The status it answers from now on. */
  status: number;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 (an ephemeral port, or `port` to come back on the same one). */
export async function startAlertReceiver(port = 0): Promise<AlertReceiver> {
  const receiver: AlertReceiver = { url: '', received: [], attempts: 0, status: 200, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.attempts += 1;
      const body = Buffer.concat(chunks).toString('utf8');
      if (receiver.status < 300) receiver.received.push({ headers: req.headers, body, json: JSON.parse(body) });
      res.writeHead(receiver.status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return receiver;
}
