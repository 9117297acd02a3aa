/**
 * Google's discovery documents as JSON Schema (issue 32, "Contracts"). The excerpts kept under
 * docs/vendors/google/ hold verbatim discovery schemas (`{id, type, properties, $ref: "Name", ...}`,
 * a REST dialect of protobuf messages); this converts them to JSON Schema draft 2020-12 for Ajv:
 * `$ref: "Name"` is `#/$defs/Name`, `type` / `properties` / `items` / `enum` / `additionalProperties`
 * / `readOnly` carry over, `type: "any"` (and a stub `{}`) accepts any value, and the `format`s that
 * change the JSON are honoured: int64 and uint64 are strings in discovery (proto3 JSON), so a decimal
 * string or a JSON integer is accepted. Discovery objects are open (the answer side: Google adds
 * members); `closed` makes every object with `properties` and no `additionalProperties` refuse other
 * members, as the vendor does for a request ("Invalid JSON payload received. Unknown name").
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/** One schema of a discovery document (the members read here; the others are kept verbatim and ignored). */
export interface DiscoverySchema {
  id?: string;
  description?: string;
  $ref?: string;
  type?: 'any' | 'array' | 'boolean' | 'integer' | 'number' | 'object' | 'string';
  format?: string;
  properties?: Record<string, DiscoverySchema>;
  additionalProperties?: DiscoverySchema;
  items?: DiscoverySchema;
  enum?: string[];
  readOnly?: boolean;
  deprecated?: boolean;
}

/** One method of a discovery document. */
export interface DiscoveryMethod {
  id: string;
  httpMethod: string;
  path: string;
  parameters?: Record<string, { location: string; type?: string; required?: boolean }>;
  request?: { $ref: string };
  response?: { $ref: string };
}

/** An excerpt under docs/vendors/google/: where it was read, its methods and schemas, which were stubbed. */
export interface DiscoveryExcerpt {
  source: { repo: string; path: string; commit: string; revision: string; total_chars: number; note?: string };
  /** Schemas replaced by `{}` (members the gateway never sends or reads). */
  stubbed: string[];
  methods: Record<string, DiscoveryMethod>;
  schemas: Record<string, DiscoverySchema>;
}

/** A JSON Schema (draft 2020-12) object. */
export type JsonSchema = { [keyword: string]: unknown };

/** How `toJsonSchema` builds its document. */
export interface ConvertOptions {
  /** The `$id` of the result (its `$defs` are then `${id}#/$defs/Name`). */
  id: string;
  /** Objects with `properties` and no `additionalProperties` refuse other members (the request side). */
  closed: boolean;
  /** Members left out of a schema, e.g. `{ GenerateContentRequest: ['model'] }` for a path-bound member. */
  omit?: Record<string, readonly string[]>;
}

/** Reads an excerpt, `file` relative to the project root. */
export function readExcerpt(file: string): DiscoveryExcerpt {
  return JSON.parse(readFileSync(join(projectRoot(), file), 'utf8')) as DiscoveryExcerpt;
}

/** Discovery formats carried as JSON strings holding an integer. */
const INTEGER_STRINGS: Record<string, string> = { int64: '^-?[0-9]+$', uint64: '^[0-9]+$' };

function typeKeywords(s: DiscoverySchema): JsonSchema {
  if (s.type === undefined || s.type === 'any') return {};
  const pattern = s.type === 'string' && s.format !== undefined ? INTEGER_STRINGS[s.format] : undefined;
  if (pattern !== undefined) return { anyOf: [{ type: 'string', pattern }, { type: 'integer' }] };
  return { type: s.type };
}

/** One discovery schema as JSON Schema (`$ref`s point into the `$defs` of the same document). */
export function convertSchema(s: DiscoverySchema, closed: boolean): JsonSchema {
  const out: JsonSchema = {};
  if (s.description !== undefined) out.description = s.description;
  if (s.readOnly === true) out.readOnly = true;
  if (s.deprecated === true) out.deprecated = true;
  if (s.$ref !== undefined) return { ...out, $ref: `#/$defs/${s.$ref}` };
  Object.assign(out, typeKeywords(s));
  if (s.enum !== undefined) out.enum = s.enum;
  if (s.properties !== undefined) {
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, convertSchema(v, closed)]));
  }
  if (s.additionalProperties !== undefined) out.additionalProperties = convertSchema(s.additionalProperties, closed);
  else if (closed && s.properties !== undefined) out.additionalProperties = false;
  if (s.items !== undefined) out.items = convertSchema(s.items, closed);
  return out;
}

/** The whole excerpt as one JSON Schema document, a `$defs` entry per discovery schema. */
export function toJsonSchema(excerpt: DiscoveryExcerpt, options: ConvertOptions): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(excerpt.schemas)) {
    const def = convertSchema(schema, options.closed);
    const props = def.properties as Record<string, JsonSchema> | undefined;
    for (const member of options.omit?.[name] ?? []) delete props?.[member];
    defs[name] = def;
  }
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: options.id, $defs: defs };
}

/**
 * Members of a method's request schema that its URL carries: the path parameters that name one
 * (`model` in `v1beta/{+model}:generateContent`). With gRPC transcoding's `body: "*"` they are bound
 * to the path and are not body members, so a body that sends one is refused.
 */
export function pathBoundMembers(excerpt: DiscoveryExcerpt, methodId: string): string[] {
  const method = excerpt.methods[methodId];
  if (!method?.request) throw new Error(`the excerpt has no method ${methodId} with a request`);
  const request = excerpt.schemas[method.request.$ref];
  return Object.entries(method.parameters ?? {})
    .filter(([name, p]) => p.location === 'path' && request?.properties?.[name] !== undefined)
    .map(([name]) => name);
}
