/**
 * `alerts:` of gateway.config.yaml (issue 33 item 3), compiled: the default low-balance threshold,
 * the webhook endpoints with their resolved signing secrets, and the outbox's timings.
 */
import type { GatewayConfigManifest } from '../generated/manifest-types.js';
import { parseUsd } from '../money.js';

/** The events an endpoint may subscribe to. */
export const ALERT_TYPES = ['balance.low', 'key.budget_reached', 'deployment.circuit_opened', 'deployment.recovered'] as const;
/** One event type. */
export type AlertType = (typeof ALERT_TYPES)[number];

/** One webhook endpoint. */
export interface AlertWebhook {
  url: string;
  /** The signing secret (from its env location), or null: sent unsigned. */
  secret: string | null;
  events: readonly AlertType[];
}

/** The compiled `alerts:` settings. */
export interface AlertSettings {
  /** The default threshold of `balance.low`; null: only accounts with their own threshold alert. */
  lowBalanceNano: bigint | null;
  checkMs: number;
  emailBalanceLow: boolean;
  /** How long an undelivered event is retried. */
  retryForMs: number;
  webhooks: readonly AlertWebhook[];
}

/** `alerts:` with its defaults; an unset section alerts nothing but accounts' own thresholds by mail. */
export function compileAlerts(raw: GatewayConfigManifest['alerts'], env: NodeJS.ProcessEnv): AlertSettings {
  return {
    lowBalanceNano: raw?.low_balance_usd === undefined ? null : parseUsd(raw.low_balance_usd),
    checkMs: (raw?.check_seconds ?? 5) * 1000,
    emailBalanceLow: raw?.email_balance_low ?? true,
    retryForMs: Math.round((raw?.retry_hours ?? 24) * 3_600_000),
    webhooks: (raw?.webhooks ?? []).map((w) => ({
      url: w.url,
      secret: (w.secret && env[w.secret.slice('env:'.length)]) || null,
      events: w.events as AlertType[],
    })),
  };
}
