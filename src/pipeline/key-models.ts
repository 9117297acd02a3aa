/**
 * A key's `allowed_models` (issue 33 item 2): offering ids, or patterns where `*` stands for any run of
 * characters (`gpt-4o*`, `*-mini`, `*`). An alias is resolved to its offering first, so a pattern
 * names offerings, never aliases. A key without the list may use every model.
 */
import type { CompiledOffering } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { RequestContext } from './context.js';

/** Compiled patterns, by list (a key's list is the same array for as long as its lookup is cached). */
const compiled = new WeakMap<readonly string[], RegExp[]>();

function patternRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${escaped}$`, 's');
}

/** Whether `offeringId` is in the list; a null list allows every model. */
export function modelAllowed(allowed: readonly string[] | null | undefined, offeringId: string): boolean {
  if (!allowed) return true;
  let patterns = compiled.get(allowed);
  if (!patterns) {
    patterns = allowed.map(patternRegExp);
    compiled.set(allowed, patterns);
  }
  return patterns.some((p) => p.test(offeringId));
}

/** Whether the request's key may use `offering`. */
export function keyAllows(ctx: RequestContext, offering: CompiledOffering): boolean {
  return modelAllowed(ctx.auth?.controls?.allowedModels, offering.id);
}

/** The 403 for a model the key may not use (`requested` as the client named it; `param` the field). */
export function checkKeyAllows(ctx: RequestContext, offering: CompiledOffering, requested: string, param: string): void {
  if (!keyAllows(ctx, offering)) {
    throw new GatewayError('model_not_allowed', `This API key may not use the model "${requested}".`, { param });
  }
}
