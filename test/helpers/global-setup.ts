/**
 * Vitest global setup: one migrated in-memory store's data directory, made once per run and written to
 * a temporary file that every in-memory test store starts from (test/helpers/db.ts). An in-memory
 * PGlite otherwise runs initdb in WASM, about 2.5 s here, and the suite opens one per test gateway.
 * Made from the migrations as they are when vitest starts: restart a watching vitest after editing one
 * (the template's checksum for it would no longer match, and migrate() refuses a changed migration).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { memoryStoreTemplate } from '../../src/store/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the in-memory store template (an uncompressed PGlite data directory dump). */
    memoryStoreTemplate: string;
  }
}

/** Writes the template and provides its path; the returned teardown removes it. */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-test-store-'));
  const file = join(dir, 'template.tar');
  writeFileSync(file, new Uint8Array(await (await memoryStoreTemplate()).arrayBuffer()));
  project.provide('memoryStoreTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
