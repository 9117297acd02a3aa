/**
 * The admin API's request schemas, read from schemas/admin/: the same files api/admin.yaml names,
 * so the OpenAPI document describes exactly what the routes validate. Read once per process.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../paths.js';

/** The request schemas the admin routes validate with, by file name under schemas/admin/. */
export type AdminRequestSchema = 'account-create-request' | 'topup-request' | 'usage-query' | 'account-patch-request' | 'key-patch-request'
  | 'key-create-request' | 'key-create-with-account-request';

const cache = new Map<AdminRequestSchema, object>();

/** One request schema, without `$schema` and `$id` (the admin plugin's Ajv is draft-07 and compiles each once per scope). */
export function adminSchema(name: AdminRequestSchema): object {
  let schema = cache.get(name);
  if (!schema) {
    const { $schema: _dialect, $id: _id, ...rest } = JSON.parse(readFileSync(join(projectRoot(), 'schemas', 'admin', `${name}.json`), 'utf8')) as Record<string, unknown>;
    schema = rest;
    cache.set(name, schema);
  }
  return schema;
}
