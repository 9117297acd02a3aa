/**
 * LISTEN on a PostgreSQL channel over a connection of its own (issue 30: a replica about to answer
 * 402 NOTIFYs the others, which give their grants' headroom back at once). A lost connection is
 * opened again after a pause; notifications sent meanwhile are missed, which only delays a reclaim
 * to the other replica's next flush.
 */
import pg from 'pg';

/** How long to wait before listening again after the connection failed. */
const RELISTEN_MS = 1_000;

/** Listens on `channel`, calling `handler` with each payload; resolves with the function that stops it. */
export async function listenPostgres(databaseUrl: string, channel: string, handler: (payload: string) => void): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('notification', (message) => { if (message.channel === channel && message.payload) handler(message.payload); });
    c.on('error', () => {
      c.end().catch(() => undefined);
      if (client === c) client = null;
      if (!stopped) retry = setTimeout(() => { connect().catch(() => undefined); }, RELISTEN_MS);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      client = c;
    } catch {
      await c.end().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => { connect().catch(() => undefined); }, RELISTEN_MS);
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
