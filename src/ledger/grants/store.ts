/**
 * The grant book's store over one Db (migration 013): the flush, and the reclaim requests a replica
 * about to answer 402 sends the others (a flag their next flush reads, and a NOTIFY so that they
 * flush at once).
 */
import type { Db } from '../../store/types.js';
import type { GrantStore } from './book.js';
import type { FlushLine, FlushPayload } from './flush.js';
import { FLUSH_ASYNC, FLUSH_DURABLE, RECLAIM_PENDING_SQL, RECLAIM_SQL } from './statements.js';

/** The grant statements over `db`. */
export class DbGrantStore implements GrantStore {
  constructor(private readonly db: Db) {}

  /** One flush, committed as the payload says. */
  flush(payload: FlushPayload): Promise<FlushLine[]> {
    return this.db.run<FlushLine>(payload.commit === 'async' ? FLUSH_ASYNC : FLUSH_DURABLE, [JSON.stringify(payload)]);
  }

  /** Flags the other replicas' grants for the account; how many there were. */
  async askOthers(accountId: string, owner: string): Promise<number> {
    const [row] = await this.db.query<{ flagged: number }>(RECLAIM_SQL, [accountId, owner]);
    return Number(row?.flagged ?? 0);
  }

  /** Whether another replica's grant for the account has not answered its reclaim flag yet. */
  async othersPending(accountId: string, owner: string): Promise<boolean> {
    const [row] = await this.db.query<{ pending: boolean }>(RECLAIM_PENDING_SQL, [accountId, owner]);
    return row?.pending === true;
  }
}
