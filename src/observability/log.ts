/**
 * Structured JSON logs (pino), one object per line: `time` (ISO 8601), `level` (a label: "info"),
 * `msg`, and the fields given. Two layers keep credentials out:
 *  - known credential fields (authorization / x-api-key / cookie headers, apiKey, api_key, key,
 *    token) are censored with "[redacted]" (censor.ts);
 *  - the `streamWrite` hook rewrites every finished line, so a gateway key (`gw-...`) or a vendor
 *    key (`sk-...`, `sk-ant-...`) is replaced wherever it appears: message, interpolated arguments,
 *    child bindings, nested fields at any depth, error messages, stacks and causes.
 */
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { censorFields } from './censor.js';
import { BatchedFdDestination } from './log-destination.js';

export type { Logger } from 'pino';

/**
 * A key-shaped run: `gw-` or `sk-` (which covers `sk-ant-`, `sk-proj-`) and at least 8 key
 * characters. Not preceded by a letter, so words such as "task-scheduler" or "disk-cache" stay.
 */
const SECRET = /(?<![A-Za-z])(gw|sk)-[A-Za-z0-9_-]{8,}/g;

/** Replaces every `gw-...` / `sk-...` key in `text` with `gw-[redacted]` / `sk-[redacted]`. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, '$1-[redacted]');
}

const LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The log level from `GATEWAY_LOG_LEVEL` (case-insensitive); 'info' when unset or empty; throws on an unknown level. */
export function logLevelFromEnv(env: NodeJS.ProcessEnv | Record<string, string | undefined>): LevelWithSilent {
  const raw = env.GATEWAY_LOG_LEVEL?.trim().toLowerCase();
  if (!raw) return 'info';
  if (!(LEVELS as readonly string[]).includes(raw)) {
    throw new Error(`GATEWAY_LOG_LEVEL must be one of ${LEVELS.join(', ')} (got ${JSON.stringify(env.GATEWAY_LOG_LEVEL)})`);
  }
  return raw as LevelWithSilent;
}

/**
 * How to log: the level, and where to (default: standard output, written asynchronously in batches
 * by log-destination.ts: a busy gateway makes one write per batch of lines instead of one per line;
 * what is left is written when the process exits; at most LOG_BUFFER_BYTES wait).
 */
export interface LoggerOptions {
  level: LevelWithSilent;
  destination?: DestinationStream;
}

/**
 * The most log output held in memory while standard output is slower than the gateway (a stalled
 * pipe): past it, lines are dropped rather than growing the process without bound.
 */
const LOG_BUFFER_BYTES = 8 * 1024 * 1024;

const STDOUT = 1;

/** A pino logger with the gateway's line format and redaction. */
export function createLogger(opts: LoggerOptions): Logger {
  const options = {
    level: opts.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }), log: censorFields },
    hooks: { streamWrite: redactSecrets },
  };
  return pino(options, opts.destination ?? new BatchedFdDestination(STDOUT, LOG_BUFFER_BYTES));
}
