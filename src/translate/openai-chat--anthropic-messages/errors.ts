/** The two client errors this translator raises, each naming the parameter at fault. */
import { GatewayError } from '../../errors.js';

/** An `unsupported_parameter` error naming the parameter, with the reason when one helps. */
export function unsupported(param: string, why?: string): GatewayError {
  const reason = why ? `: ${why}.` : ' by this model.';
  return new GatewayError('unsupported_parameter', `The parameter '${param}' is not supported${reason}`, { param });
}

/** An `invalid_request` error naming the parameter. */
export function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}
