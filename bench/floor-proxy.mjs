#!/usr/bin/env node
/**
 * The floor under any Node gateway: a minimal reverse proxy, with nothing but the two hops. A node:http
 * server; each request is passed to the upstream over one undici Pool (keep-alive, as the gateway's
 * upstream client) with its method, path, headers and body as they came, and the answer is streamed
 * back as it arrives (status, headers, body chunks; backpressure through pipeline()). No store, no
 * auth, no parsing, no logging. bench/run.mjs measures it beside the gateway, so that "added latency"
 * can be read against what one more Node process hop costs on the same machine.
 *
 * Usage: FLOOR_UPSTREAM=http://127.0.0.1:8089 FLOOR_PORT=8090 node bench/floor-proxy.mjs
 */
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const upstream = process.env.FLOOR_UPSTREAM ?? 'http://127.0.0.1:8089';
const port = Number(process.env.FLOOR_PORT ?? 8090);
const pool = new Pool(upstream, { pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });

/** Hop-by-hop headers (RFC 9110 7.6.1) and host: not forwarded in either direction. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
const endToEnd = (headers) => {
  const out = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP.has(name)) out[name] = value;
  return out;
};

const server = http.createServer(async (req, res) => {
  const aborted = new AbortController();
  res.on('close', () => { if (!res.writableFinished) aborted.abort(); });
  try {
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const answer = await pool.request({ method: req.method, path: req.url, headers: endToEnd(req.headers), body: hasBody ? req : null, signal: aborted.signal });
    res.writeHead(answer.statusCode, endToEnd(answer.headers));
    await pipeline(answer.body, res);
  } catch (error) {
    if (!res.headersSent) { res.writeHead(502, { 'content-type': 'text/plain' }); res.end(`upstream: ${error.message}\n`); } else res.destroy();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`floor proxy listening on http://127.0.0.1:${port} -> ${upstream}`));
const stop = () => server.close(() => pool.close().then(() => process.exit(0)));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
