/**
 * api/*.yaml: the routes served outside routes/ and the console (the admin API, health, metrics,
 * signed file URLs) as data, validated against schemas/manifest/api.schema.json. Read by codegen
 * (the OpenAPI document) and by the tests that check it against the registered routes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import type { ApiManifest } from '../src/generated/manifest-types.js';

/** One api/*.yaml file, with its name (e.g. `api/admin.yaml`). */
export interface LoadedApiManifest { file: string; manifest: ApiManifest }

/** One operation of an api manifest. */
export type ApiOperation = ApiManifest['operations'][number];

/** Reads and validates every api/*.yaml under `root`, in file-name order; an invalid one throws naming the file and path. */
export async function loadApiManifests(root: string): Promise<LoadedApiManifest[]> {
  const schema = JSON.parse(await readFile(join(root, 'schemas/manifest/api.schema.json'), 'utf8')) as object;
  const validate = new Ajv2020({ strict: true, allErrors: false }).compile(schema);
  const names = (await readdir(join(root, 'api'))).filter((n) => n.endsWith('.yaml')).sort();
  const loaded: LoadedApiManifest[] = [];
  for (const name of names) {
    const file = `api/${name}`;
    const manifest = parse(await readFile(join(root, file), 'utf8')) as unknown;
    if (!validate(manifest)) {
      const e = validate.errors![0]!;
      throw new Error(`${file}: ${e.instancePath || '/'}: ${e.message ?? 'invalid'}${e.params.additionalProperty ? ` "${String(e.params.additionalProperty)}"` : ''}`);
    }
    checkSecurity(file, manifest as ApiManifest);
    loaded.push({ file, manifest: manifest as ApiManifest });
  }
  return loaded;
}

/** Every security name an operation uses is `none` or a scheme the file declares. */
function checkSecurity(file: string, m: ApiManifest): void {
  const known = new Set(['none', ...Object.keys(m.security_schemes ?? {})]);
  for (const op of m.operations) {
    for (const name of op.security ?? m.security ?? []) {
      if (!known.has(name)) throw new Error(`${file}: operation ${op.id}: unknown security scheme "${name}"`);
    }
    for (const status of op.errors ?? []) {
      if (!m.error?.statuses[String(status)]) throw new Error(`${file}: operation ${op.id}: error ${status} has no description in error.statuses`);
    }
  }
}
