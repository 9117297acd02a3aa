/**
 * Admin API errors. Every failure is rendered as `{error: {message, type, code, param}}`; messages are
 * safe to show (never a key, a token or a stack). Ledger, validation and body-parser errors are mapped
 * here so the admin plugin has one error path.
 */
import { DependencyUnavailableError } from '../errors.js';
import { LedgerError } from '../ledger/ledger.js';
import { sqlState } from '../store/db.js';

/** Stable admin error codes with their HTTP status and error type. */
export const ADMIN_ERRORS = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  invalid_amount: { status: 400, type: 'invalid_request_error' },
  invalid_admin_token: { status: 401, type: 'authentication_error' },
  not_found: { status: 404, type: 'not_found_error' },
  already_refunded: { status: 409, type: 'invalid_request_error' },
  internal_error: { status: 500, type: 'server_error' },
  store_unavailable: { status: 503, type: 'server_error' },
} as const;

/** One of the codes in ADMIN_ERRORS. */
export type AdminErrorCode = keyof typeof ADMIN_ERRORS;

/** A refused admin request; `message` must be safe to show. */
export class AdminError extends Error {
  readonly status: number;
  constructor(
    readonly code: AdminErrorCode,
    message: string,
    readonly param: string | null = null,
    status?: number,
  ) {
    super(message);
    this.name = 'AdminError';
    this.status = status ?? ADMIN_ERRORS[code].status;
  }

  /** The JSON body sent to the client. */
  body(): { error: { message: string; type: string; code: AdminErrorCode; param: string | null } } {
    return { error: { message: this.message, type: ADMIN_ERRORS[this.code].type, code: this.code, param: this.param } };
  }
}

interface ValidationItem {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  validation?: ValidationItem[];
  validationContext?: string;
  message?: unknown;
}

/** The field a schema failure is about: `balance_usd`, `limit`, ... (null when unknown). */
function paramOf(item: ValidationItem | undefined): string | null {
  if (!item) return null;
  const extra = item.params?.additionalProperty ?? item.params?.missingProperty;
  if (typeof extra === 'string') return extra;
  const path = (item.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  return path || null;
}

/** Maps anything thrown inside the admin plugin to an AdminError (unknown errors: a generic 500). */
export function toAdminError(error: unknown): AdminError {
  if (error instanceof AdminError) return error;
  if (error instanceof LedgerError) return new AdminError(error.code, error.message);
  if (error instanceof DependencyUnavailableError) return new AdminError('store_unavailable', 'The gateway cannot reach its store right now. Retry shortly.');
  const e = (error ?? {}) as FastifyLikeError;
  if (Array.isArray(e.validation)) {
    return new AdminError('invalid_request', String(e.message ?? 'invalid request'), paramOf(e.validation[0]));
  }
  // Numeric overflow of a bigint column (an absurdly large amount).
  if (sqlState(error) === '22003') return new AdminError('invalid_amount', 'amount out of range');
  // Fastify's own client errors: malformed JSON, wrong content type, body too large, ...
  const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
  if (typeof e.code === 'string' && e.code.startsWith('FST_') && status >= 400 && status < 500) {
    return new AdminError('invalid_request', String(e.message), null, status);
  }
  return new AdminError('internal_error', 'The gateway failed to process the admin request.');
}
