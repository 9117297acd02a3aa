/**
 * No import cycles in src/ (issue 9, point 5). The graph is every relative import between src files,
 * type-only ones included (test/helpers/import-graph.ts, which says how each import form is read).
 * src/generated is included (it imports nothing today). A DFS then reports every cycle it meets as a back edge.
 */
import { describe, expect, it } from 'vitest';
import { importGraph, specifiersOf } from '../helpers/import-graph.js';

/**
 * Cycles met by a depth-first search: one per back edge, as `a -> b -> ... -> a`, rotated to start at
 * the smallest node and deduplicated. Every strongly connected component with a cycle yields at least one.
 */
function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles = new Set<string>();
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      const seen = state.get(next);
      if (seen === 'open') {
        const loop = stack.slice(stack.indexOf(next));
        const start = loop.indexOf([...loop].sort()[0]!);
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        cycles.add([...rotated, rotated[0]].join(' -> '));
      } else if (seen === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return [...cycles].sort();
}

describe('import cycles', () => {
  it('the DFS finds two-module, longer and self cycles, and none in a DAG', () => {
    const graph = (pairs: Record<string, string[]>) => new Map(Object.entries(pairs));
    expect(findCycles(graph({ a: ['b'], b: ['c'], c: [] , d: ['a', 'c'] }))).toEqual([]);
    expect(findCycles(graph({ b: ['a'], a: ['b'] }))).toEqual(['a -> b -> a']);
    expect(findCycles(graph({ x: ['y'], y: ['z'], z: ['x'], w: ['x'] }))).toEqual(['x -> y -> z -> x']);
    expect(findCycles(graph({ s: ['s'] }))).toEqual(['s -> s']);
    expect(findCycles(graph({ a: ['b'], b: ['a'], c: ['d'], d: ['c'] }))).toEqual(['a -> b -> a', 'c -> d -> c']);
  });

  it('sees every import form, including type-only, re-exports and dynamic imports', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import './side.js';",
      "export { c } from './c.js';",
      "export type { D } from './d.js';",
      "export * from './e.js';",
      "const f = await import('./f.js');",
      "type G = import('./g.js').G;",
      "// import { no } from './comment.js';",
      "const s = \"import { no } from './string.js'\";",
      "import pg from 'pg';",
    ].join('\n');
    expect(specifiersOf('x.ts', text)).toEqual(['./a.js', '../b.js', './side.js', './c.js', './d.js', './e.js', './f.js', './g.js', 'pg']);
  });

  it('src has no import cycles', () => {
    const { edges } = importGraph();
    expect(edges.size).toBeGreaterThan(50);
    const cycles = findCycles(edges);
    expect(cycles, `import cycles in src/:\n  ${cycles.join('\n  ')}`).toEqual([]);
  });

  it('every relative import maps to a src file (so no edge is missed)', () => {
    expect(importGraph().unresolved, 'relative imports that map to no src/**/*.ts file').toEqual([]);
  });
});
