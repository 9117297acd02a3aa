/**
 * The OpenAPI path items of api/*.yaml (the admin API, health, metrics, signed file URLs): each
 * operation's security, path and query parameters, body and answers, with every schema a component
 * registered from its file under schemas/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiOperation, LoadedApiManifest } from './api-manifest.js';
import type { ApiManifest } from '../src/generated/manifest-types.js';

type Json = Record<string, unknown>;

/** Registers a schema file as a component and returns its `$ref`. */
export type ComponentRef = (file: string) => string;

type Answer = NonNullable<ApiOperation['answers'][string]>;

function security(names: string[]): Json[] {
  return names.map((name) => (name === 'none' ? {} : { [name]: [] }));
}

function answer(a: Answer, ref: ComponentRef): Json {
  const headers = a.headers ? { headers: Object.fromEntries(Object.entries(a.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) } : {};
  const media = typeof a.media === 'string' ? [a.media] : a.media ?? (a.schema ? ['application/json'] : []);
  const schema = a.schema ? { $ref: ref(a.schema) } : a.binary ? { type: 'string', format: 'binary' } : { type: media[0] === 'application/json' ? 'object' : 'string' };
  const content = media.length ? { content: Object.fromEntries(media.map((type) => [type, { schema }])) } : {};
  return { description: a.description, ...headers, ...content };
}

/** A query schema's properties as query parameters, each with its property's schema. */
function queryParams(root: string, file: string): Json[] {
  const schema = JSON.parse(readFileSync(join(root, 'schemas', file), 'utf8')) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: (schema.required ?? []).includes(name), schema: rest, ...(description ? { description } : {}) };
  });
}

function requestBody(body: NonNullable<ApiOperation['body']>, ref: ComponentRef): Json {
  const description = body.description ? { description: body.description } : {};
  const content = body.raw ? { '*/*': { schema: { type: 'string', format: 'binary' } } } : { 'application/json': { schema: { $ref: ref(body.schema!) } } };
  return { required: body.required ?? true, ...description, content };
}

function operation(root: string, m: ApiManifest, op: ApiOperation, ref: ComponentRef): Json {
  const responses: Json = {};
  for (const [status, a] of Object.entries(op.answers)) responses[status] = answer(a!, ref);
  for (const status of op.errors ?? []) {
    responses[String(status)] = { description: m.error!.statuses[String(status)], content: { 'application/json': { schema: { $ref: ref(m.error!.schema) } } } };
  }
  const parameters: Json[] = [...op.path.matchAll(/\{([^}]+)\}/g)].map((p) => ({ name: p[1], in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } }));
  if (op.query) parameters.push(...queryParams(root, op.query));
  for (const h of op.headers ?? []) parameters.push({ name: h.name, in: 'header', required: false, schema: { type: 'string' }, description: h.description });
  return {
    operationId: op.id, tags: [m.tag], summary: op.summary, security: security(op.security ?? m.security ?? []),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body ? { requestBody: requestBody(op.body, ref) } : {}),
    responses,
  };
}

/** Every operation of the manifests as path items, and the security schemes they declare. */
export function apiPaths(root: string, manifests: LoadedApiManifest[], ref: ComponentRef): { paths: Record<string, Json>; securitySchemes: Json } {
  const paths: Record<string, Json> = {};
  const securitySchemes: Json = {};
  for (const { file, manifest } of manifests) {
    Object.assign(securitySchemes, manifest.security_schemes ?? {});
    for (const op of manifest.operations) {
      const item = (paths[op.path] ??= {});
      const method = op.method.toLowerCase();
      if (item[method]) throw new Error(`${file}: ${op.method} ${op.path} is declared twice`);
      item[method] = operation(root, manifest, op, ref);
    }
  }
  return { paths, securitySchemes };
}
