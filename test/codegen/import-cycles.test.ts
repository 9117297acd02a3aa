/**
 * No import cycles in src/ (issue 9, point 5). Every `src/**\/*.ts` file is parsed with the TypeScript
 * parser (so specifiers inside comments and strings are never mistaken for imports) and each relative
 * module reference becomes an edge: `import ... from`, `import type ... from`, `export ... from`,
 * side-effect `import './x.js'`, dynamic `import('./x.js')` and type-position `import('./x.js').T`.
 * A type-only import counts: it still ties the two modules' designs together. src/generated is
 * included (it imports nothing today). A DFS then reports every cycle it meets as a back edge.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

const SRC = join(projectRoot(), 'src');

/** Every .ts file under `dir`, absolute paths, sorted so the report is stable. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The module specifiers a source file references, whatever the import form. */
function specifiersOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push(arg.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** src-relative path with forward slashes, for messages. */
function label(path: string): string {
  return relative(SRC, path).split(sep).join('/');
}

interface ImportGraph {
  readonly edges: ReadonlyMap<string, readonly string[]>;
  /** Relative specifiers that did not map to a file (a parser or mapping bug would hide edges). */
  readonly unresolved: readonly string[];
}

/** The graph of relative imports between src files; nodes are src-relative paths. */
function importGraph(): ImportGraph {
  const files = tsFiles(SRC);
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const targets = new Set<string>();
    for (const spec of specifiersOf(file, readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('./') && !spec.startsWith('../')) continue; // packages and node: builtins
      if (spec.endsWith('.json')) continue; // data, imports nothing
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (known.has(target)) targets.add(label(target));
      else unresolved.push(`${label(file)} -> ${spec}`);
    }
    edges.set(label(file), [...targets].sort());
  }
  return { edges, unresolved };
}

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
