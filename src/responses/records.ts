/**
 * Stored responses (migration 015; issue 31 item 3): each statement reads only the caller's rows, and
 * treats a row past its `expires_at` as absent (the sweep deletes it later). Times come from the
 * gateway's clock (src/clock.ts), never the database's now(), so tests move them by hand.
 */
import type { Clock } from '../clock.js';
import type { Queryable } from '../store/types.js';

type Json = Record<string, unknown>;

/** One stored response. */
export interface StoredResponse {
  id: string;
  accountId: string;
  /** The vendor that keeps a passthrough model's response; null when the gateway keeps it whole. */
  providerId: string | null;
  /** The Response as the client received it (null for a passthrough one). */
  response: Json | null;
  /** This request's own input items, with ids. */
  inputItems: Json[];
  /** The earlier turns' items this response continued (previous_response_id), before its input. */
  context: Json[];
  createdAt: Date;
  expiresAt: Date;
}

interface Row {
  id: string; account_id: string; provider_id: string | null; response: Json | null; input_items: Json[]; context: Json[];
  created_at: Date | string; expires_at: Date | string;
}

/** The shape of a response id (the gateway's `resp_<hex>`, a vendor's); anything else is no response and never reaches SQL. */
export const RESPONSE_ID = /^[A-Za-z0-9_-]{1,256}$/;

const COLUMNS = 'id, account_id, provider_id, response, input_items, context, created_at, expires_at';

function toRecord(r: Row): StoredResponse {
  return {
    id: r.id, accountId: r.account_id, providerId: r.provider_id, response: r.response, inputItems: r.input_items, context: r.context,
    createdAt: new Date(r.created_at), expiresAt: new Date(r.expires_at),
  };
}

/** What a new stored response is made of. */
export type NewStoredResponse = Pick<StoredResponse, 'id' | 'accountId' | 'providerId' | 'response' | 'inputItems' | 'context'>;

/** The stored responses of every account. */
export class ResponseRecords {
  constructor(private readonly db: Queryable, private readonly clock: Clock, private readonly ttlMs: () => number) {}

  /**
   * Keeps `record` for its lifetime. An id already kept (a retried request) is left as it is: ids are
   * the gateway's own (src/translate/openai-responses--openai-chat/envelope.ts) or the vendor's.
   */
  async save(record: NewStoredResponse): Promise<void> {
    const now = this.clock.now();
    await this.db.query(
      `INSERT INTO stored_responses (${COLUMNS}) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7, $8) ON CONFLICT (id) DO NOTHING`,
      [record.id, record.accountId, record.providerId, record.response === null ? null : JSON.stringify(record.response),
        JSON.stringify(record.inputItems), JSON.stringify(record.context), now, new Date(now.getTime() + this.ttlMs())],
    );
  }

  /** The account's live response `id`, or null (unknown, another account's, or expired). */
  async get(accountId: string, id: string): Promise<StoredResponse | null> {
    if (!RESPONSE_ID.test(id)) return null;
    const rows = await this.db.query<Row>(`SELECT ${COLUMNS} FROM stored_responses WHERE id = $1 AND account_id = $2 AND expires_at > $3`, [id, accountId, this.clock.now()]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Deletes the account's live response `id`; false when there was none. */
  async delete(accountId: string, id: string): Promise<boolean> {
    if (!RESPONSE_ID.test(id)) return false;
    const rows = await this.db.query(`DELETE FROM stored_responses WHERE id = $1 AND account_id = $2 AND expires_at > $3 RETURNING id`, [id, accountId, this.clock.now()]);
    return rows.length > 0;
  }

  /** True when some response has expired (the sweep's cheap check). */
  async anyExpired(): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM stored_responses WHERE expires_at <= $1 LIMIT 1', [this.clock.now()]);
    return rows.length > 0;
  }

  /** Deletes every expired response; answers how many. */
  async sweep(): Promise<number> {
    const rows = await this.db.query('DELETE FROM stored_responses WHERE expires_at <= $1 RETURNING id', [this.clock.now()]);
    return rows.length;
  }
}
