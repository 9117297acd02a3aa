/**
 * Which store errors mean "the server cannot be reached" (a 503 the client may retry) rather than a
 * bug or a refused statement (a 500). Only these become DependencyUnavailableError (issue 8 item 3).
 */

/** Socket-level failures from node:net. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATE classes and codes of a server going away: 08 (connection exception), 57P01-57P03
 * (admin shutdown, crash shutdown, cannot connect now), 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** node-postgres reports a lost or never-made connection with these messages and no code. */
const PG_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not queryable|not queryable|Query read timeout/i;

/** True when `err` says the store could not be reached (not that a statement was wrong). */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || isUnavailableSqlState(code))) return true;
  return PG_MESSAGES.test(err.message);
}
