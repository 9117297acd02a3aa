/**
 * The alerts' outbox and deliverer on a real store (issue 33 item 3): balance.low once per crossing
 * (rearmed only when the account is back at or above its threshold), an account's own threshold,
 * signed webhooks received once, mail to the console user, retries with backoff while the receiver
 * is down, giving up after the retry window, and an endpoint taken out of the configuration.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { AlertDeliverer, postJson, signature } from '../../src/alerts/deliver.js';
import { AlertOutbox } from '../../src/alerts/outbox.js';
import type { AlertSettings } from '../../src/alerts/settings.js';
import type { MailMessage } from '../../src/console/mail.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { parseUsd } from '../../src/money.js';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';
import { describeStore, openTestDb } from '../helpers/db.js';

const SECRET = 'test-alert-secret';

describeStore('alerts: outbox and delivery', () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  let receiver: AlertReceiver;
  let now: Date;
  let settings: AlertSettings;
  let outbox: AlertOutbox;
  let deliverer: AlertDeliverer;
  const mails: MailMessage[] = [];
  const clock = { now: () => now };

  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
    receiver = await startAlertReceiver();
    outbox = new AlertOutbox(t.db, clock, () => settings);
    deliverer = new AlertDeliverer(t.db, clock, () => settings, { post: postJson, mail: async (m) => { mails.push(m); } });
  });
  afterAll(async () => { await receiver?.close(); ledger?.close(); await t?.dispose(); });
  beforeEach(async () => {
    now = new Date('2026-12-03T12:00:00Z');
    settings = {
      lowBalanceNano: null, checkMs: 1000, emailBalanceLow: true, retryForMs: 3_600_000,
      webhooks: [{ url: receiver.url, secret: SECRET, events: ['balance.low', 'deployment.circuit_opened'] }],
    };
    receiver.status = 200;
    receiver.received.length = 0;
    mails.length = 0;
  });

  /** An account with its own threshold (the default stays unset, so other tests' accounts never alert). */
  async function account(balanceUsd: string, thresholdUsd: string, email?: string): Promise<string> {
    const { id } = await ledger.createAccount({ balanceNano: parseUsd(balanceUsd) });
    expect(await outbox.setThreshold(id, parseUsd(thresholdUsd))).toBe(true);
    if (email) await t.db.query(`INSERT INTO console_users (id, email, password_hash, account_id) VALUES ($1, $2, 'x', $3)`, [`cu_${id}`, email, id]);
    return id;
  }

  it('balance.low fires once per crossing, to the webhook (signed) and the console user', async () => {
    const id = await account('10', '5', `low-${Date.now()}@example.test`);
    expect(await outbox.checkBalances()).toBe(0);
    expect(await ledger.reserve({ holdId: `h1_${id}`, accountId: id, amountNano: parseUsd('6'), ttlMs: 60_000 })).toBe(true);
    expect(await outbox.checkBalances()).toBe(1);
    expect(await outbox.checkBalances()).toBe(0);
    // Back above the threshold: rearmed, no event; below again: a second crossing.
    await ledger.release(`h1_${id}`);
    expect(await outbox.checkBalances()).toBe(0);
    expect(await ledger.reserve({ holdId: `h2_${id}`, accountId: id, amountNano: parseUsd('5.5'), ttlMs: 60_000 })).toBe(true);
    expect(await outbox.checkBalances()).toBe(1);

    expect(await deliverer.due()).toBe(true);
    expect(await deliverer.run()).toEqual({ delivered: 4, retried: 0, given_up: 0 });
    expect(await deliverer.run()).toEqual({ delivered: 0, retried: 0, given_up: 0 });
    const mine = receiver.received.filter((r) => r.json.data.account_id === id);
    expect(mine.map((r) => r.json.data.available_usd).sort()).toEqual(['4', '4.5']);
    expect(mine.map((r) => r.json.data.threshold_usd)).toEqual(['5', '5']);
    expect(new Set(mine.map((r) => r.json.id)).size).toBe(2);
    for (const r of mine) {
      expect(r.json.type).toBe('balance.low');
      expect(r.headers['x-gateway-event-id']).toBe(r.json.id);
      // The receiver's check: HMAC-SHA256 of the exact body with the shared secret.
      expect(r.headers['x-gateway-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(r.body).digest('hex')}`);
      expect(r.headers['x-gateway-signature']).not.toBe(signature('another secret', r.body));
    }
    expect(mails.filter((m) => m.text.includes(id))).toHaveLength(2);
    expect(mails[0]!.subject).toMatch(/balance is low/);
  });

  it('the default threshold covers accounts without their own; null clears an account\'s own', async () => {
    const { id } = await ledger.createAccount({ balanceNano: parseUsd('1') });
    const own = await account('1', '0.5');
    settings = { ...settings, lowBalanceNano: parseUsd('2') };
    await outbox.checkBalances();
    await deliverer.run();
    const alerted = new Set(receiver.received.map((r) => r.json.data.account_id));
    expect(alerted.has(id)).toBe(true);
    expect(alerted.has(own)).toBe(false); // its own 0.5 is under its 1
    expect(await outbox.setThreshold(own, null)).toBe(true);
    receiver.received.length = 0;
    await outbox.checkBalances();
    await deliverer.run();
    expect(receiver.received.map((r) => r.json.data.account_id)).toContain(own);
    expect(await outbox.setThreshold('acct_missing', null)).toBe(false);
  });

  it('retries with backoff while the receiver is down, and delivers once when it is back', async () => {
    receiver.status = 503;
    const event = await outbox.circuit('openai/gpt-x', true);
    expect(event!.type).toBe('deployment.circuit_opened');
    expect(await deliverer.run()).toEqual({ delivered: 0, retried: 1, given_up: 0 });
    // Not due again before its backoff (1 s, then 2 s).
    expect(await deliverer.due()).toBe(false);
    now = new Date(now.getTime() + 1_000);
    expect(await deliverer.run()).toEqual({ delivered: 0, retried: 1, given_up: 0 });
    now = new Date(now.getTime() + 1_000);
    expect(await deliverer.due()).toBe(false);
    now = new Date(now.getTime() + 1_000);
    receiver.status = 200;
    expect(await deliverer.run()).toEqual({ delivered: 1, retried: 0, given_up: 0 });
    expect(receiver.received.map((r) => r.json.id)).toEqual([event!.id]);
    expect(receiver.received[0]!.json.data).toMatchObject({ deployment: 'openai/gpt-x' });
  });

  it('gives up after the retry window, and at once on an endpoint no longer configured', async () => {
    receiver.status = 500;
    settings = { ...settings, retryForMs: 2_500 };
    await outbox.circuit('openai/gpt-y', true);
    expect(await deliverer.run()).toMatchObject({ retried: 1 });
    now = new Date(now.getTime() + 1_000);
    // The next backoff (2 s) would end past the window (2.5 s after the event): given up.
    expect(await deliverer.run()).toMatchObject({ given_up: 1 });
    now = new Date(now.getTime() + 60_000);
    expect(await deliverer.due()).toBe(false);

    receiver.status = 200;
    await outbox.circuit('openai/gpt-z', true);
    settings = { ...settings, webhooks: [] };
    expect(await deliverer.run()).toMatchObject({ given_up: 1, delivered: 0 });
    expect(receiver.received).toHaveLength(0);
    // Nothing subscribed: nothing written.
    expect(await outbox.circuit('openai/gpt-z', true)).toBeNull();
  });
});
