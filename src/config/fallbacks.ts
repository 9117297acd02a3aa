/**
 * Model fallbacks checked at boot, reload and codegen (issue 29 items 4 and 5): each id in
 * `fallbacks`, `context_window_fallbacks` and `content_policy_fallbacks` names an offering of the
 * same service type, and following all three lists never comes back to where it started.
 */
import { ManifestError } from './errors.js';
import type { OfferingSource } from './deployments.js';
import type { CompiledOffering } from './types.js';

/** The three lists: the compiled field and the manifest key. */
const LISTS = [
  ['fallbacks', 'fallbacks'],
  ['contextWindowFallbacks', 'context_window_fallbacks'],
  ['contentPolicyFallbacks', 'content_policy_fallbacks'],
] as const;

/** One fallback entry: from an offering to another, and where the entry is (a pointer in `from`'s file). */
interface Edge { from: string; to: string; pointer: string }

function edgesOf(offering: CompiledOffering, index: number): Edge[] {
  return LISTS.flatMap(([field, key]) => offering[field].map((to, k) => ({ from: offering.id, to, pointer: `/offerings/${index}/${key}/${k}` })));
}

function refuse(sources: ReadonlyMap<string, OfferingSource>, edge: Edge, reason: string): never {
  const { source } = sources.get(edge.from)!;
  throw new ManifestError(source.file, edge.pointer, reason, source.lineOf(edge.pointer));
}

/** Refuses an unknown fallback id, a fallback of another service type, and a fallback cycle (named by its path). */
export function checkFallbacks(offerings: ReadonlyMap<string, CompiledOffering>, sources: ReadonlyMap<string, OfferingSource>): void {
  const edges = new Map<string, Edge[]>();
  for (const offering of offerings.values()) {
    const own = edgesOf(offering, sources.get(offering.id)!.index);
    for (const edge of own) {
      const target = offerings.get(edge.to);
      if (!target) refuse(sources, edge, `unknown offering "${edge.to}" (no provider declares it)`);
      if (target.serviceType !== offering.serviceType) {
        refuse(sources, edge, `fallback "${edge.to}" is ${target.serviceType} and "${offering.id}" is ${offering.serviceType}: a fallback must be of the same service type`);
      }
    }
    edges.set(offering.id, own);
  }
  const cycle = findCycle([...offerings.keys()], edges);
  if (cycle) refuse(sources, cycle[0]!, `fallback cycle: ${[cycle[0]!.from, ...cycle.map((e) => e.to)].join(' -> ')}`);
}

/** The first cycle a depth-first walk meets, as its edges in order, or null. */
function findCycle(ids: readonly string[], edges: ReadonlyMap<string, readonly Edge[]>): Edge[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: Edge[] = [];
  const visit = (id: string): Edge[] | null => {
    state.set(id, 'open');
    for (const edge of edges.get(id) ?? []) {
      path.push(edge);
      // One edge per open offering is on the path, so the cycle starts at the one leaving `edge.to`.
      if (state.get(edge.to) === 'open') return path.slice(path.findIndex((e) => e.from === edge.to));
      const found = state.has(edge.to) ? null : visit(edge.to);
      if (found) return found;
      path.pop();
    }
    state.set(id, 'done');
    return null;
  };
  for (const id of ids) {
    const found = state.has(id) ? null : visit(id);
    if (found) return found;
  }
  return null;
}
