/** `npm run codegen` writes src/generated/; `--check` exits 1 when a generated file has drifted. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { generateAll } from './generate.js';

async function main(): Promise<void> {
  const root = projectRoot();
  const check = process.argv.includes('--check');
  let drifted = 0;
  for (const [file, content] of await generateAll(root)) {
    const path = join(root, file);
    const current = await readFile(path, 'utf8').catch(() => null);
    if (current === content) continue;
    if (check) { drifted++; process.stderr.write(`drifted: ${file}\n`); continue; }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
    process.stdout.write(`wrote ${file}\n`);
  }
  if (drifted) { process.stderr.write('generated files are out of date: run `npm run codegen`\n'); process.exit(1); }
}

main().catch((error: unknown) => { process.stderr.write(`codegen failed: ${error instanceof Error ? error.message : String(error)}\n`); process.exit(1); });
