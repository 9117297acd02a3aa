/** Query parameters of the routes the gateway answers itself. */
import { GatewayError } from '../../errors.js';
import type { RequestContext } from '../context.js';

/** An integer query parameter within bounds, or the default; anything else is a 400 naming it. */
export function intQuery(ctx: RequestContext, name: string, min: number, max: number, fallback: number): number {
  const raw = (ctx.req.query as Record<string, unknown>)[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) throw new GatewayError('invalid_request', `${name} must be an integer from ${min} to ${max}.`, { param: name });
  return value;
}
