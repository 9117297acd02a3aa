/** DESIGN.md: no provider id appears in the generic pipeline or upstream code. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/paths.js';

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? sources(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') ? [join(dir, e.name)] : []))));
  return nested.flat();
}

describe('generic code', () => {
  it('names no provider id in src/pipeline, src/upstream or src/server', async () => {
    const root = projectRoot();
    const providerFiles = (await readdir(join(root, 'providers'))).filter((f) => f.endsWith('.yaml'));
    const ids = await Promise.all(providerFiles.map(async (f) => (parse(await readFile(join(root, 'providers', f), 'utf8')) as { id: string }).id));
    // Well-known vendors too, so a provider added later is covered before its manifest exists.
    const names = [...new Set([...ids, 'openai', 'anthropic', 'elevenlabs', 'azure', 'cohere', 'bfl'])];
    expect(ids.length).toBeGreaterThan(0);
    const offenders: string[] = [];
    for (const dir of ['src/pipeline', 'src/upstream', 'src/server']) {
      for (const file of await sources(join(root, dir))) {
        const text = (await readFile(file, 'utf8')).toLowerCase();
        for (const name of names) if (new RegExp(`\\b${name}\\b`).test(text)) offenders.push(`${file.slice(root.length + 1)}: ${name}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
