/**
 * Imports flow one way (issue 29, Design): nothing below the pipeline imports it. The modules the
 * pipeline is built on (configuration, translators, meters, files, limits, body parsers, routing,
 * upstream clients, the ledger and its store, wire formats, billing, observability) take their own input types, and
 * the body parsers sit below the configuration and the translators that name their types.
 *
 * Reachability counts, not only direct imports: a lower module that imports a service which imports
 * the pipeline depends on the pipeline all the same. The graph is every relative import between src
 * files, type-only ones included (test/helpers/import-graph.ts). A module is a top-level folder of src.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, SRC } from '../helpers/import-graph.js';

/** Files of the modules `from` must not reach, by any chain of imports, a file of the modules `never`. */
interface DirectionRule {
  readonly from: readonly string[];
  readonly never: readonly string[];
}

/**
 * The modules below the pipeline. observability is one too: its metrics are read by the store, the
 * limiter and the meters, and its stage timings wrap handlers of any context with a `finish`. Beside
 * the pipeline, not below it, are the services its stages call back into with the request context
 * (src/skills, src/videos: they may import it, and nothing here may import them); above it, what
 * runs it (src/server, src/admin, src/console, src/boot.ts).
 */
const BELOW_PIPELINE = ['config', 'translate', 'meters', 'files', 'limits', 'bodies', 'routing', 'upstream', 'ledger', 'store', 'formats', 'billing', 'observability'];

const RULES: readonly DirectionRule[] = [
  { from: BELOW_PIPELINE, never: ['pipeline'] },
  // The body parsers are below what names their types (route body specs, uploaded files).
  { from: ['bodies'], never: ['config', 'translate', 'pipeline'] },
];

/** The module of a src-relative path: its top-level folder (or the file itself at the top). */
function moduleOf(node: string): string {
  return node.split('/')[0]!;
}

/**
 * The imports that break `rule`: for each file of its `from` modules that reaches a forbidden module,
 * the shortest chain of imports there, as `a -> b -> ... -> pipeline/x.ts`. Chains are grouped by the
 * edge where they leave the `from` modules (the import to change); the shortest of each group is reported.
 */
function violations(edges: ReadonlyMap<string, readonly string[]>, rule: DirectionRule): string[] {
  const inFrom = (node: string): boolean => rule.from.includes(moduleOf(node));
  const forbidden = (node: string): boolean => rule.never.includes(moduleOf(node));
  const byExit = new Map<string, string[]>();
  for (const start of [...edges.keys()].sort()) {
    if (!inFrom(start)) continue;
    // Breadth first, so the chain found is a shortest one.
    const parent = new Map<string, string | null>([[start, null]]);
    const queue = [start];
    let hit: string | null = null;
    while (queue.length && hit === null) {
      const node = queue.shift()!;
      for (const next of edges.get(node) ?? []) {
        if (parent.has(next)) continue;
        parent.set(next, node);
        if (forbidden(next)) { hit = next; break; }
        queue.push(next);
      }
    }
    if (hit === null) continue;
    const chain: string[] = [];
    for (let node: string | null = hit; node !== null; node = parent.get(node) ?? null) chain.unshift(node);
    const leaves = chain.findIndex((node) => !inFrom(node));
    const exit = `${chain[leaves - 1]} -> ${chain[leaves]}`;
    const known = byExit.get(exit);
    if (!known || chain.length < known.length) byExit.set(exit, chain);
  }
  return [...byExit.values()].map((chain) => chain.join(' -> ')).sort();
}

describe('import direction', () => {
  const graph = (pairs: Record<string, string[]>) => new Map(Object.entries(pairs));
  const rule: DirectionRule = { from: ['config', 'meters'], never: ['pipeline'] };

  it('finds a direct import, one through another lower module, and one through a module beside', () => {
    expect(violations(graph({ 'config/a.ts': ['config/b.ts'], 'config/b.ts': [], 'pipeline/x.ts': ['config/a.ts'] }), rule)).toEqual([]);
    expect(violations(graph({ 'config/a.ts': ['pipeline/x.ts'], 'pipeline/x.ts': [] }), rule)).toEqual(['config/a.ts -> pipeline/x.ts']);
    // Both config files leave through meters/m.ts -> pipeline/x.ts: one report, the shortest chain.
    expect(violations(graph({
      'config/a.ts': ['config/b.ts'], 'config/b.ts': ['meters/m.ts'], 'meters/m.ts': ['pipeline/x.ts'], 'pipeline/x.ts': [],
    }), rule)).toEqual(['meters/m.ts -> pipeline/x.ts']);
    expect(violations(graph({ 'meters/m.ts': ['skills/s.ts'], 'skills/s.ts': ['pipeline/context.ts'], 'pipeline/context.ts': [] }), rule))
      .toEqual(['meters/m.ts -> skills/s.ts -> pipeline/context.ts']);
  });

  it('names only modules that exist, so a rename cannot empty a rule', () => {
    for (const r of RULES) for (const name of [...r.from, ...r.never]) expect(existsSync(join(SRC, name)), `src/${name}`).toBe(true);
  });

  for (const r of RULES) {
    it(`no file of ${r.from.join(', ')} imports ${r.never.join(', ')}`, () => {
      const { edges } = importGraph();
      expect(edges.size).toBeGreaterThan(50);
      const found = violations(edges, r);
      expect(found, `imports against the direction (src/${r.from.join(', src/')} must not reach src/${r.never.join(', src/')}):\n  ${found.join('\n  ')}`).toEqual([]);
    });
  }
});
