/**
 * Hot reload: watches the manifest folders and, after a short debounce, loads, validates and
 * compiles the whole configuration again. Only a fully valid configuration is handed to `apply`;
 * an invalid edit is reported and the previous configuration keeps serving.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** A running watcher. */
export interface ConfigWatcher { close(): void; }

async function foldersOf(root: string, includes: string[]): Promise<string[]> {
  const folders = [root, ...includes.map((i) => join(root, i)), join(root, 'schemas')];
  const schemaDirs = await readdir(join(root, 'schemas'), { withFileTypes: true }).catch(() => []);
  for (const entry of schemaDirs) if (entry.isDirectory()) folders.push(join(root, 'schemas', entry.name));
  return folders;
}

/** Watches the configuration; `reload` is called once per burst of changes, never concurrently. */
export async function watchConfig(root: string, includes: string[], reload: () => Promise<void>, debounceMs = 150): Promise<ConfigWatcher> {
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const schedule = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => { running = running.then(reload, reload); }, debounceMs);
  };
  for (const folder of await foldersOf(root, includes)) {
    try { watchers.push(watch(folder, schedule)); } catch { /* a folder that does not exist has nothing to watch */ }
  }
  return { close: () => { if (timer) clearTimeout(timer); for (const w of watchers) w.close(); } };
}
