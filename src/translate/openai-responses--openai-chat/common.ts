/** Small helpers shared by the openai-responses--openai-chat request, response and stream code. */
import { GatewayError } from '../../errors.js';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when a Responses parameter is set: the API reads `null` as "not set". */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** Refuses a parameter the chat upstream cannot represent. */
export function unsupported(param: string, message: string): never {
  throw new GatewayError('unsupported_parameter', message, { param });
}

/**
 * Refuses every set key of `object` outside `allowed` (nothing is silently dropped); `defaults`
 * lists values that mean "the default behaviour" and are therefore accepted for a key not in
 * `allowed` (e.g. `defer_loading: false`).
 */
export function refuseOtherKeys(object: Json, allowed: readonly string[], param: string, defaults: Readonly<Record<string, unknown>> = {}): void {
  for (const [key, value] of Object.entries(object)) {
    if (allowed.includes(key) || !isSet(value)) continue;
    if (key in defaults && JSON.stringify(defaults[key]) === JSON.stringify(value)) continue;
    unsupported(`${param}.${key}`, `'${param}.${key}' cannot be used with this model (it is served through chat completions).`);
  }
}

/** Built-in Responses tools the gateway never offers (spec 4.3 rule 3). */
const NOT_AVAILABLE = new Set(['code_interpreter', 'image_generation', 'file_search']);

/**
 * Refuses built-in (hosted) tool types: `tool_not_available` for the ones the gateway never offers,
 * `unsupported_responses_tools` for the rest, which a chat-only model cannot represent (spec 4.2 rule 2).
 * The first pass over all types finds `tool_not_available` before any other built-in.
 */
export function refuseBuiltins(types: readonly string[], param: string): void {
  for (const type of types) {
    if (!type) throw new GatewayError('invalid_request', 'Every tool must have a string `type`.', { param });
    if (NOT_AVAILABLE.has(type)) throw new GatewayError('tool_not_available', `The built-in tool '${type}' is not available.`, { param });
  }
  for (const type of types) {
    if (type !== 'function' && type !== 'custom') {
      throw new GatewayError('unsupported_responses_tools', `The built-in tool '${type}' cannot be used with this model: it is served through chat completions, which supports only function and custom tools.`, { param });
    }
  }
}
