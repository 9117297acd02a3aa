/** Emits TypeScript types for the manifest schemas with json-schema-to-typescript. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compile } from 'json-schema-to-typescript';
import type { JSONSchema4 } from 'json-schema';

/** The manifest schema files, in a fixed order so the output is stable. */
export const MANIFEST_SCHEMAS = ['gateway-config', 'route', 'provider', 'api'] as const;

/** One .ts source with the types of every manifest schema. */
export async function emitManifestTypes(root: string): Promise<string> {
  const parts: string[] = [];
  for (const name of MANIFEST_SCHEMAS) {
    const file = join(root, 'schemas/manifest', `${name}.schema.json`);
    const schema = JSON.parse(await readFile(file, 'utf8')) as JSONSchema4;
    delete schema.$id;
    parts.push(await compile(schema, schema.title as string, {
      bannerComment: '',
      ignoreMinAndMaxItems: true,
      cwd: join(root, 'schemas/manifest'),
      additionalProperties: false,
      style: { singleQuote: true },
    }));
  }
  return parts.join('\n');
}
