/**
 * The parameter-policy engine: applies a route's per-parameter YAML policies before translation.
 * `reject` refuses the request with `unsupported_parameter`, `drop` removes the parameter (declared,
 * so never silent), `default` fills a value the client left out. The client's body is not mutated.
 */
import { GatewayError } from '../errors.js';
import type { ParamPolicy } from './types.js';

/** The body the translator sees. */
export function applyParamPolicies(body: Record<string, unknown>, policies: Readonly<Record<string, ParamPolicy>>, target: string): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  const copy = (): Record<string, unknown> => (out ??= { ...body });
  for (const [name, policy] of Object.entries(policies)) {
    const present = body[name] !== undefined && body[name] !== null;
    if (present && policy.unsupported === 'reject') {
      throw new GatewayError('unsupported_parameter', `The parameter '${name}' is not supported by ${target}.`, { param: name });
    }
    if (present && policy.unsupported === 'drop') delete copy()[name];
    else if (!present && policy.default !== undefined) copy()[name] = policy.default;
  }
  return out ?? body;
}
