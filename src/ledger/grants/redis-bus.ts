/**
 * Reclaim requests over Redis pub/sub (issue 30: "NOTIFY and a flag their next flush reads; Redis
 * pub/sub too when REDIS_URL is set"). A second wake-up path beside PostgreSQL's NOTIFY, for replicas
 * whose LISTEN connection is down or that run behind a pooler that drops NOTIFY (PgBouncer in
 * transaction mode). Best effort, like NOTIFY: the flag in the holds table is what a flush acts on,
 * so a lost message only delays the give-back to the other replica's next flush.
 */
import { Redis } from 'ioredis';

/** A channel every replica of one deployment publishes reclaim requests on and listens to. */
export interface ReclaimBus {
  /** Asks the other replicas to give back their grant for the account. */
  publish(accountId: string): Promise<void>;
  /** Calls `handler` with each account id another replica asked a give-back for. */
  subscribe(handler: (accountId: string) => void): Promise<void>;
  /** Stops listening and closes the connections. */
  close(): Promise<void>;
}

/** The reclaim channel's name under the deployment's Redis key prefix (GATEWAY_REDIS_PREFIX). */
export const reclaimChannel = (prefix: string): string => `${prefix}grant-reclaim`;

const OPTIONS = { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (times: number) => Math.min(times * 200, 5000) };

/** Reclaim requests on Redis: one connection to publish, one subscribed (a subscribed one can do nothing else). */
export class RedisReclaimBus implements ReclaimBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;

  constructor(url: string, prefix: string) {
    this.pub = new Redis(url, OPTIONS);
    // The subscriber keeps an offline queue: ioredis re-subscribes after a reconnect from it.
    this.sub = new Redis(url, { ...OPTIONS, enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.channel = reclaimChannel(prefix);
    // A Redis that is down is logged by the limiter; here an error only means a slower reclaim.
    this.pub.on('error', () => undefined);
    this.sub.on('error', () => undefined);
  }

  async publish(accountId: string): Promise<void> {
    if (this.pub.status === 'wait') await this.pub.connect().catch(() => undefined);
    await this.pub.publish(this.channel, accountId).catch(() => undefined);
  }

  async subscribe(handler: (accountId: string) => void): Promise<void> {
    this.sub.on('message', (channel: string, message: string) => { if (channel === this.channel) handler(message); });
    await this.sub.connect().catch(() => undefined);
    await this.sub.subscribe(this.channel).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.pub.disconnect();
    this.sub.disconnect();
  }
}
