/**
 * The import graph of src/ for the codegen tests that keep its shape (test/codegen/import-cycles.test.ts,
 * test/codegen/import-direction.test.ts). Every `src/**\/*.ts` file is parsed with the TypeScript parser
 * (so specifiers inside comments and strings are never mistaken for imports) and each relative module
 * reference becomes an edge: `import ... from`, `import type ... from`, `export ... from`, side-effect
 * `import './x.js'`, dynamic `import('./x.js')` and type-position `import('./x.js').T`. A type-only
 * import counts: it still ties the two modules' designs together.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../src/paths.js';

/** The absolute path of src/. */
export const SRC = join(projectRoot(), 'src');

/** Every .ts file under `dir`, absolute paths, sorted so the report is stable. */
export function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The module specifiers a source file references, whatever the import form. */
export function specifiersOf(file: string, text: string): string[] {
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
export function label(path: string): string {
  return relative(SRC, path).split(sep).join('/');
}

/** The relative imports between src files; nodes are src-relative paths (`pipeline/context.ts`). */
export interface ImportGraph {
  readonly edges: ReadonlyMap<string, readonly string[]>;
  /** Relative specifiers that did not map to a file (a parser or mapping bug would hide edges). */
  readonly unresolved: readonly string[];
}

/** The graph of relative imports between src files. */
export function importGraph(): ImportGraph {
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
