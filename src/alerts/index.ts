/**
 * Alerts (issue 33 item 3): the outbox, its deliverer and their two jobs. `alerts-balance` looks for
 * accounts that crossed their low-balance threshold and keys that reached their budget;
 * `alerts-deliver` sends what is due. Both run on one replica at a time (jobs/exclusive.ts), and skip
 * their run when nothing could be due.
 */
import type { Clock } from '../clock.js';
import type { MailTransport } from '../console/mail.js';
import { cronEvery, type Jobs } from '../jobs/scheduler.js';
import type { Db } from '../store/types.js';
import { AlertDeliverer, postJson } from './deliver.js';
import type { AlertOutbox } from './outbox.js';
import type { AlertSettings } from './settings.js';

export { AlertOutbox } from './outbox.js';
export type { AlertSettings } from './settings.js';

/** What the alerts need of the gateway. */
export interface AlertDeps {
  db: Db;
  clock: Clock;
  settings: () => AlertSettings;
  mail: MailTransport;
}

/** Adds the outbox's two jobs to `jobs` (the check's interval is read at start); answers the deliverer. */
export function scheduleAlerts(outbox: AlertOutbox, deps: AlertDeps, jobs: Jobs): AlertDeliverer {
  const deliverer = new AlertDeliverer(deps.db, deps.clock, deps.settings, { post: postJson, mail: (message) => deps.mail.send(message) });
  jobs.add({ name: 'alerts-balance', schedule: cronEvery(deps.settings().checkMs), due: () => outbox.balanceCheckDue(), run: async () => ({ balance_low: await outbox.checkBalances(), key_budget_reached: await outbox.checkKeyBudgets() }) });
  jobs.add({ name: 'alerts-deliver', schedule: cronEvery(1000), due: () => deliverer.due(), run: async () => ({ ...await deliverer.run() }) });
  return deliverer;
}
