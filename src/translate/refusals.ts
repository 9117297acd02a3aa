/**
 * The client errors a translator raises when a request cannot be carried to its vendor, each naming
 * the parameter at fault: a parameter (or a member of one) the vendor has no equivalent for, or a
 * value of the wrong shape. Shared by every translator so the messages read alike whatever the route.
 */
import { GatewayError } from '../errors.js';

/**
 * An `unsupported_parameter` error naming the parameter, with the reason when one helps
 * (`why` is a clause without its final period); without one, "not supported by this model".
 */
export function unsupported(param: string, why?: string): GatewayError {
  const reason = why ? `: ${why}.` : ' by this model.';
  return new GatewayError('unsupported_parameter', `The parameter '${param}' is not supported${reason}`, { param });
}

/** An `invalid_request` error naming the parameter, with the whole message given. */
export function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/**
 * Refuses (as `unsupported`, naming `param.key`, with `why` when given) the first key of `object`
 * outside `allowed` whose value is set: a null or undefined member is taken as absent.
 */
export function refuseExtraKeys(object: Record<string, unknown>, allowed: readonly string[], param: string, why?: string): void {
  for (const [key, value] of Object.entries(object)) {
    if (value !== null && value !== undefined && !allowed.includes(key)) throw unsupported(`${param}.${key}`, why);
  }
}
