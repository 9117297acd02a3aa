/** Copies the project's manifests into a temporary folder that a test may edit. */
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { projectRoot } from '../../src/paths.js';

/** A private copy of gateway.config.yaml, routes/, providers/ and schemas/. */
export interface ConfigCopy {
  dir: string;
  configFile: string;
  /** Rewrites one YAML file of the copy through `edit` (the parsed document). */
  editYaml(file: string, edit: (doc: Record<string, any>) => void): Promise<void>;
  write(file: string, text: string): Promise<void>;
}

/** Makes the copy. */
export async function copyConfig(): Promise<ConfigCopy> {
  const root = projectRoot();
  const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
  for (const item of ['gateway.config.yaml', 'routes', 'providers', 'schemas']) await cp(join(root, item), join(dir, item), { recursive: true });
  return {
    dir,
    configFile: join(dir, 'gateway.config.yaml'),
    async editYaml(file, edit) {
      const doc = parse(await readFile(join(dir, file), 'utf8')) as Record<string, any>;
      edit(doc);
      await writeFile(join(dir, file), stringify(doc));
    },
    write: (file, text) => writeFile(join(dir, file), text),
  };
}

/**
 * One upstream attempt per request (`routing.max_attempts: 1`): for tests of what a single failed
 * attempt costs the client; retries and fail-over have their own (test/e2e/routing-*.test.ts).
 */
export async function singleAttempt(copy: ConfigCopy): Promise<void> {
  await copy.editYaml('gateway.config.yaml', (doc) => { doc.routing = { ...(doc.routing ?? {}), max_attempts: 1 }; });
}
