/**
 * The visual features a vision request selects (spec 4.12: `features` "array or comma-separated
 * string"): read with the same rule the hold counts them by (the `list-items` counter: trimmed, empties
 * ignored, duplicates once), so the transactions reserved and billed agree (spec 1: one per selected
 * feature). Names are the vendor's (`VisualFeatures` in ../shared/specs/azure/image-analysis/generated.json),
 * case and all.
 */
import { GatewayError } from '../../errors.js';
import { listItems } from '../../meters/counters/list-items.js';

/**
 * The features the gateway serves, in the order the answer lists them. The vendor's `denseCaptions`
 * is left out: issue 12 names these six, and the billing table prices nothing else.
 */
export const VISUAL_FEATURES = ['caption', 'read', 'tags', 'objects', 'people', 'smartCrops'] as const;

/** One supported visual feature. */
export type VisualFeature = (typeof VISUAL_FEATURES)[number];

const isFeature = (name: string): name is VisualFeature => (VISUAL_FEATURES as readonly string[]).includes(name);

/**
 * The distinct selected features, in the client's order; a 400 naming `features` for none, or for an
 * unknown one (a near miss in case, e.g. `SmartCrops`, is told the vendor's spelling).
 */
export function selectedFeatures(value: unknown): VisualFeature[] {
  const names = listItems(Array.isArray(value) ? (value as string[]) : [value as string]);
  const supported = `supported: ${VISUAL_FEATURES.join(', ')}`;
  if (names.length === 0) throw new GatewayError('invalid_request', `Select at least one feature in 'features' (${supported}).`, { param: 'features' });
  const unknown = names.filter((name) => !isFeature(name));
  if (unknown.length > 0) {
    const hint = unknown.map((name) => VISUAL_FEATURES.find((f) => f.toLowerCase() === name.toLowerCase())).filter((f) => f !== undefined);
    const spelled = hint.length > 0 ? `; names are case-sensitive (did you mean ${hint.map((f) => `'${f}'`).join(', ')}?)` : '';
    const list = unknown.map((name) => `'${name}'`).join(', ');
    throw new GatewayError('unsupported_parameter', `Unsupported feature${unknown.length > 1 ? 's' : ''} ${list} in 'features' (${supported})${spelled}.`, { param: 'features' });
  }
  return names as VisualFeature[];
}
