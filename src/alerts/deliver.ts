/**
 * Delivery of the alerts' outbox (issue 33 item 3), run by one replica at a time (the `alerts`
 * job): each due delivery is sent once per run, webhooks as a signed JSON POST, `mail:` ones through
 * the console's mail transport. A failure is retried with backoff (1 s doubling, at most 10 min)
 * until `alerts.retry_hours` after the event, then given up.
 */
import { createHmac } from 'node:crypto';
import { request } from 'undici';
import type { Clock } from '../clock.js';
import type { MailMessage } from '../console/mail.js';
import type { Db } from '../store/types.js';
import { MAIL_ENDPOINT, type AlertEvent } from './outbox.js';
import type { AlertSettings } from './settings.js';

/** What a run sends through: overridable in tests. */
export interface AlertSenders {
  post(url: string, body: string, headers: Record<string, string>): Promise<number>;
  mail(message: MailMessage): Promise<void>;
}

/** What one run did. */
export interface DeliveryReport { delivered: number; retried: number; given_up: number }

/** Deliveries taken per run; the rest wait for the next. */
const BATCH = 100;
/** Sent at once within a run. */
const PARALLEL = 8;
const MAX_BACKOFF_MS = 600_000;
const TIMEOUT_MS = 10_000;
/** Why a delivery is given up at once: its endpoint was taken out of the configuration since. */
const GONE = 'the endpoint is no longer configured';

/** `sha256=<hex>`: HMAC-SHA256 of the exact body with the endpoint's secret (X-Gateway-Signature). */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** POST with undici, the status answered (its body read and dropped); timeouts bound a hanging receiver. */
export async function postJson(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const res = await request(url, { method: 'POST', body, headers, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  await res.body.dump();
  return res.statusCode;
}

/** The mail of a `balance.low` event. */
export function balanceLowMail(to: string, event: AlertEvent): MailMessage {
  const d = event.data as { account_id: string; available_usd: string; threshold_usd: string };
  return {
    to,
    subject: 'Your AI gateway balance is low',
    text: `The available balance of account ${d.account_id} is ${d.available_usd} USD, below ${d.threshold_usd} USD.\n`
      + 'Top up to keep your requests running.\n',
  };
}

interface Due { event_id: string; endpoint: string; attempts: number; body: AlertEvent; created_at: Date }

const DUE = `SELECT d.event_id, d.endpoint, d.attempts, e.body, e.created_at FROM alert_deliveries d JOIN alert_events e ON e.id = d.event_id
  WHERE d.delivered_at IS NULL AND d.failed_at IS NULL AND d.next_at <= $1 ORDER BY d.next_at LIMIT ${BATCH}`;

/** Sends the outbox's due deliveries. */
export class AlertDeliverer {
  constructor(private readonly db: Db, private readonly clock: Clock, private readonly settings: () => AlertSettings, private readonly senders: AlertSenders) {}

  /** Whether any delivery is due (one indexed read: the job's cheap check). */
  async due(): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM alert_deliveries WHERE delivered_at IS NULL AND failed_at IS NULL AND next_at <= $1 LIMIT 1', [this.clock.now()])).length > 0;
  }

  /** One run: every due delivery tried once. */
  async run(): Promise<DeliveryReport> {
    const report: DeliveryReport = { delivered: 0, retried: 0, given_up: 0 };
    const due = await this.db.query<Due>(DUE, [this.clock.now()]);
    for (let i = 0; i < due.length; i += PARALLEL) {
      await Promise.all(due.slice(i, i + PARALLEL).map(async (d) => { report[await this.attempt(d)] += 1; }));
    }
    return report;
  }

  private async attempt(d: Due): Promise<keyof DeliveryReport> {
    const event = typeof d.body === 'string' ? JSON.parse(d.body) as AlertEvent : d.body;
    let error: string | null = null;
    try {
      error = await this.send(d.endpoint, event);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const now = this.clock.now();
    if (error === null) {
      await this.db.query('UPDATE alert_deliveries SET delivered_at = $3, attempts = attempts + 1, last_error = NULL WHERE event_id = $1 AND endpoint = $2', [d.event_id, d.endpoint, now]);
      return 'delivered';
    }
    const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** d.attempts);
    const giveUp = error === GONE || now.getTime() + backoff > new Date(d.created_at).getTime() + this.settings().retryForMs;
    await this.db.query(`UPDATE alert_deliveries SET attempts = attempts + 1, last_error = $3, next_at = $4, failed_at = CASE WHEN $5 THEN $6::timestamptz END
      WHERE event_id = $1 AND endpoint = $2`, [d.event_id, d.endpoint, error.slice(0, 500), new Date(now.getTime() + backoff), giveUp, now]);
    return giveUp ? 'given_up' : 'retried';
  }

  /** Sends one delivery: null when the endpoint took it, else why not. */
  private async send(endpoint: string, event: AlertEvent): Promise<string | null> {
    if (endpoint.startsWith(MAIL_ENDPOINT)) {
      await this.senders.mail(balanceLowMail(endpoint.slice(MAIL_ENDPOINT.length), event));
      return null;
    }
    const hook = this.settings().webhooks.find((w) => w.url === endpoint);
    // An endpoint taken out of the configuration since the event was written gets nothing more.
    if (!hook) return GONE;
    const body = JSON.stringify(event);
    const headers: Record<string, string> = {
      'content-type': 'application/json', 'user-agent': 'ai-gateway-alerts/1',
      'x-gateway-event-id': event.id, 'x-gateway-event-type': event.type,
    };
    if (hook.secret) headers['x-gateway-signature'] = signature(hook.secret, body);
    const status = await this.senders.post(endpoint, body, headers);
    return status >= 200 && status < 300 ? null : `the endpoint answered ${status}`;
  }
}
