/** Test harness: a fastify app with only the admin plugin, on port 0, over a Ledger on openTestDb(). */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { registerAdminRoutes } from '../../src/admin/routes.js';
import { Ledger, type UsageRow } from '../../src/ledger/ledger.js';
import { AuthCache } from '../../src/pipeline/auth-cache.js';
import type { Db } from '../../src/store/db.js';
import { openTestDb } from '../helpers/db.js';

/** A running admin server. */
export interface AdminHarness {
  app: FastifyInstance;
  ledger: Ledger;
  auth: AuthCache;
  db: Db;
  url: string;
  token: string;
  /** Everything the server logged. */
  logs: string[];
  /** Sends a request (admin token by default); body is JSON-encoded unless it is a string. */
  call(method: string, path: string, opts?: { body?: unknown; token?: string | null; headers?: Record<string, string> }): Promise<{ status: number; json: any; text: string }>;
  /** Writes one settled usage row per amount (nano-USD) for the account. */
  charge(accountId: string, amounts: bigint[]): Promise<UsageRow[]>;
  close(): Promise<void>;
}

let holdSeq = 0;

/** Starts the server. */
export async function startAdmin(token = 'test-admin-token-0123456789'): Promise<AdminHarness> {
  const store = await openTestDb();
  const ledger = new Ledger(store.db);
  const auth = new AuthCache(ledger, 60_000);
  const logs: string[] = [];
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => void logs.push(line) } } });
  registerAdminRoutes(app, { ledger, auth, token });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    app, ledger, auth, db: store.db, url, token, logs,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const bearer = opts.token === undefined ? token : opts.token;
      if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await request(url + path, { method: method as 'GET', headers, body });
      const text = await res.body.text();
      return { status: res.statusCode, text, json: text ? JSON.parse(text) : undefined };
    },
    async charge(accountId, amounts) {
      const rows: UsageRow[] = [];
      for (const amountNano of amounts) {
        const holdId = `hold_test_${process.pid}_${++holdSeq}`;
        if (!(await ledger.reserve({ holdId, accountId, amountNano, ttlMs: 60_000 }))) throw new Error('reserve failed');
        rows.push(...(await ledger.settle({
          holdId, accountId,
          rows: [{ requestId: `req_${holdSeq}`, model: 'test-model', kind: 'tokens', quantity: 1000n, unit: 'token', amountNano, details: { n: holdSeq } }],
        })));
      }
      return rows;
    },
    async close() {
      await app.close();
      await store.dispose();
    },
  };
}
