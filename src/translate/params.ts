/**
 * The parameter-policy engine: applies a route's per-parameter YAML policies before translation.
 * `reject` refuses the request with `unsupported_parameter`, `drop` removes the parameter (declared,
 * so never silent), `default` fills a value the client left out, `map` turns an accepted value into
 * its upstream one, `allow` refuses a value outside a list (`unsupported_parameter`, naming the
 * parameter and the supported values). The client's body is not mutated.
 */
import { GatewayError } from '../errors.js';
import type { ParamPolicy } from './types.js';

/** A `map` policy: the value (when present) must be one of the map's keys and becomes its value. */
function mapValue(body: Record<string, unknown>, name: string, map: Readonly<Record<string, string>>): void {
  const value = body[name];
  if (value === undefined || value === null) return;
  if (typeof value === 'string' && Object.hasOwn(map, value)) {
    body[name] = map[value];
    return;
  }
  const shown = typeof value === 'string' ? `"${value.length > 64 ? `${value.slice(0, 64)}...` : value}"` : `a ${typeof value}`;
  throw new GatewayError('invalid_request', `Unsupported value for '${name}': ${shown}. Accepted values: ${Object.keys(map).join(', ')}.`, { param: name });
}

/** Shows a refused value in a message: a string quoted and shortened, else its JSON text. */
function shown(value: unknown): string {
  if (typeof value === 'string') return `"${value.length > 64 ? `${value.slice(0, 64)}...` : value}"`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
}

/** An `allow` policy: the value (when present) must be one of the listed ones, compared exactly. */
function allowValue(body: Record<string, unknown>, name: string, allowed: readonly (string | number | boolean)[], target: string): void {
  const value = body[name];
  if (value === undefined || value === null || allowed.includes(value as string | number | boolean)) return;
  throw new GatewayError('unsupported_parameter', `Unsupported value for '${name}' on ${target}: ${shown(value)}. Supported values: ${allowed.join(', ')}.`, { param: name });
}

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
    if (policy.map) mapValue(copy(), name, policy.map);
    if (policy.allow) allowValue(out ?? body, name, policy.allow, target);
  }
  return out ?? body;
}
