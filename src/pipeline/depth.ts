/**
 * Refuses request bodies nested deeper than any real API request (hardening): pathological nesting
 * is a 400 at the gateway rather than a recursion hazard for translators, tokenizers and upstreams.
 */

/** The deepest nesting of objects and arrays a request body may have. */
export const MAX_BODY_DEPTH = 64;

/** True when `value` nests objects/arrays deeper than `limit` (iterative: no recursion on hostile input). */
export function nestedDeeperThan(value: unknown, limit = MAX_BODY_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
