/**
 * Emits the OpenAPI 3.1 document of every route: both auth schemes, request and response schemas
 * from the wire schemas under schemas/, the SSE variant where a route streams, and the error
 * responses of spec section 7 in the route format's error shape.
 */
import { readFileSync } from 'node:fs';
import { consolePaths, CONSOLE_SESSION_SCHEME } from './console.js';
import type { LoadedApiManifest } from './api-manifest.js';
import { apiPaths } from './api-paths.js';
import type { ConsolePages } from '../src/console/pages-manifest.js';
import { join } from 'node:path';
import type { CompiledGateway, CompiledRoute } from '../src/config/types.js';

type Json = Record<string, unknown>;

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Malformed request: bad model name or unsupported parameters.',
  '401': 'Missing or invalid key.',
  '402': 'No available credits.',
  '404': 'Unknown route or resource.',
  '413': 'Request body too large.',
  '429': 'Rate or concurrency limited; retry after `retry-after` seconds.',
  '500': 'Gateway error. Not charged.',
  '502': 'Upstream error. Not charged.',
  '503': 'Upstream unreachable. Not charged.',
  '504': 'Upstream timeout. Not charged.',
};

/** Which schema file first claimed each component name (two different files may not share one). */
const owners = new Map<string, string>();

/** Registers a wire schema (and the files it references) as a component; returns its $ref. */
function component(gateway: CompiledGateway, file: string, components: Json): string {
  const schema = (gateway.wireSchemas.get(file) ?? JSON.parse(readFileSync(join(gateway.root, 'schemas', file), 'utf8'))) as Json;
  const name = String(schema.title ?? file.replace(/\W+/g, '_'));
  const owner = owners.get(name);
  if (owner && owner !== file && JSON.stringify(schema) !== JSON.stringify(JSON.parse(readFileSync(join(gateway.root, 'schemas', owner), 'utf8')))) {
    throw new Error(`schemas/${file} and schemas/${owner} both have the title "${name}" but differ`);
  }
  owners.set(name, owner ?? file);
  if (!components[name]) {
    components[name] = {};
    const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : '';
    components[name] = rewrite(schema, (ref) => component(gateway, folder + ref, components));
  }
  return `#/components/schemas/${name}`;
}

function rewrite(node: unknown, resolveRef: (ref: string) => string): unknown {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, resolveRef));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$schema' || key === '$id') continue;
    out[key] = key === '$ref' && typeof value === 'string' && !value.startsWith('#') ? resolveRef(value) : rewrite(value, resolveRef);
  }
  return out;
}

/** The query parameters the gateway's own list handlers read (src/pipeline/local), by handler. */
const HANDLER_QUERY: Readonly<Record<string, Json[]>> = {
  'models-list': [{ name: 'service_type', in: 'query', required: false, schema: { type: 'string' } }],
  // src/pipeline/local/message-files.ts: `page` is the previous answer's next_page; `after_id` the SDK's cursor.
  'message-files-list': [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 20 } },
    { name: 'page', in: 'query', required: false, schema: { type: 'string' } },
    { name: 'after_id', in: 'query', required: false, schema: { type: 'string' } },
  ],
  // src/pipeline/local/skills.ts: `source` filters by the vendor's built-in source value.
  'skills-list': [
    { name: 'source', in: 'query', required: false, schema: { type: 'string' } },
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  ],
};

function operation(gateway: CompiledGateway, route: CompiledRoute, components: Json, errorRef: string): Json {
  const m = route.manifest;
  const schemas = m.schemas ?? {};
  const ok: Json = {};
  if (schemas.response) ok['application/json'] = { schema: { $ref: component(gateway, schemas.response, components) } };
  // A file answer is binary; a plain-text one (a transcription's text, srt or vtt, spec 4.8) is a string.
  for (const type of typeof m.file_answer === 'string' ? [m.file_answer] : m.file_answer ?? []) {
    ok[type] = { schema: type.startsWith('text/') ? { type: 'string' } : { type: 'string', format: 'binary' } };
  }
  if (m.stream) ok['text/event-stream'] = { schema: { type: 'string', description: `Server-sent events${schemas.stream_event ? ` of ${String((gateway.wireSchemas.get(schemas.stream_event) as Json).title)}` : ''}.` } };
  if (schemas.stream_event) component(gateway, schemas.stream_event, components);
  const responses: Json = { '200': { description: 'Success.', headers: { 'x-request-id': { schema: { type: 'string' } } }, content: ok } };
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    responses[status] = { description, content: { 'application/json': { schema: { $ref: errorRef } } } };
  }
  const op: Json = { operationId: m.id, summary: m.summary, security: [{ bearer: [] }, { apiKey: [] }], responses };
  const params: Json[] = [...m.path.matchAll(/\{([^}]+)\}/g)].map((p) => ({ name: p[1], in: 'path', required: true, schema: { type: 'string' } }));
  params.push(...(HANDLER_QUERY[m.handler] ?? []));
  // A required header may come under an alias, so each name is optional here; the gateway answers 400 without any.
  for (const h of m.require_headers ?? []) {
    for (const name of [h.name, ...(h.aliases ?? [])]) {
      params.push({ name, in: 'header', required: false, schema: { type: 'string', enum: h.values }, description: `Required: ${[h.name, ...(h.aliases ?? [])].join(' or ')}.` });
    }
  }
  if (route.raw && schemas.request) {
    // A raw body (issue 9 point 3): the bytes are the body, every parameter rides in the query.
    params.push(...rawQueryParams(gateway, route, schemas.request, components));
    if (params.length) op.parameters = params;
    op.requestBody = rawRequestBody(route.raw);
    return op;
  }
  // `query_fields` (spec 4.9: `?to=fr` on a document upload) ride in the query, or in the body.
  for (const name of m.query_fields ?? []) params.push({ name, in: 'query', required: false, schema: { type: 'string' }, description: `Or as the body field \`${name}\` (not both).` });
  if (params.length) op.parameters = params;
  if (schemas.request) op.requestBody = { required: true, content: requestContent(route, bodySchemaRef(gateway, route, schemas.request, components)) };
  return op;
}

/** A raw route's query parameters, each with its request schema property's schema (values are coerced from text). */
function rawQueryParams(gateway: CompiledGateway, route: CompiledRoute, request: string, components: Json): Json[] {
  const schema = components[component(gateway, request, components).split('/').pop()!] as { properties?: Record<string, Json>; required?: string[] };
  return (route.manifest.query_fields ?? []).map((name) => {
    const { description, ...property } = schema.properties?.[name] ?? { type: 'string' };
    return { name, in: 'query', required: (schema.required ?? []).includes(name), schema: property, ...(description ? { description } : {}) };
  });
}

/** A raw route's body: the bytes, under each Content-Type the route accepts. */
function rawRequestBody(raw: NonNullable<CompiledRoute['raw']>): Json {
  const description = `The '${raw.part}' file as the whole body, at most ${raw.maxBytes} bytes; Content-Type one of: ${[...raw.mime].join(', ')}.`;
  const content = Object.fromEntries([...raw.mime].map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));
  return { required: true, description, content };
}

/**
 * The body's schema: the request schema's component, or for a route with `query_fields` a component
 * of it (`<Title>Body`) where those fields are not required, since the query may carry them.
 */
function bodySchemaRef(gateway: CompiledGateway, route: CompiledRoute, request: string, components: Json): string {
  const ref = component(gateway, request, components);
  const query = route.manifest.query_fields ?? [];
  if (query.length === 0) return ref;
  const name = `${ref.split('/').pop()!}Body`;
  const original = components[ref.split('/').pop()!] as Json;
  const required = ((original.required as string[] | undefined) ?? []).filter((field) => !query.includes(field));
  components[name] = { ...original, required, description: `${String(original.description ?? '')} Query fields (${query.join(', ')}) may come in the query instead.`.trim() };
  return `#/components/schemas/${name}`;
}

/** A JSON body, or a multipart form (the request schema's fields plus each declared file part as binary), or both. */
function requestContent(route: CompiledRoute, schemaRef: string): Json {
  const multipart = route.multipart;
  if (!multipart) return { 'application/json': { schema: { $ref: schemaRef } } };
  const files: Json = {};
  const encoding: Json = {};
  for (const [name, part] of Object.entries(multipart.files)) {
    const file = { type: 'string', format: 'binary', description: `At most ${part.maxBytes} bytes.` };
    // Several parts of one name (spec 4.14: `image` or repeated `image[]`): one binary or a list of
    // them, as OpenAI's createImageEdit declares `image`; `format: binary` on top marks it a file part.
    files[name] = part.max > 1 ? { format: 'binary', description: `Up to ${part.max} files, each at most ${part.maxBytes} bytes.`, anyOf: [{ type: 'string', format: 'binary' }, { type: 'array', maxItems: part.max, items: { type: 'string', format: 'binary' } }] } : file;
    if (part.mime) encoding[name] = { contentType: [...part.mime].join(', ') };
  }
  const required = Object.entries(multipart.files).filter(([, part]) => part.min > 0).map(([name]) => name);
  const form = { 'multipart/form-data': { schema: { allOf: [{ $ref: schemaRef }, { type: 'object', properties: files, ...(required.length ? { required } : {}) }] }, ...(Object.keys(encoding).length ? { encoding } : {}) } };
  // `body.json`: the route takes JSON too (the file parts then come from `file_inputs`, spec 4.8).
  return multipart.acceptsJson ? { ...form, 'application/json': { schema: { $ref: schemaRef } } } : form;
}

const CATALOG_SCHEMA: Json = {
  type: 'object', required: ['data'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: { type: 'object', required: ['id', 'provider', 'service_type', 'availability', 'billing'], properties: {
      id: { type: 'string' }, display_name: { type: 'string' }, provider: { type: 'string' }, service_type: { type: 'string' },
      aliases: { type: 'array', items: { type: 'string' }, description: 'Other model ids the offering answers to, priced and billed as it (issue 31 item 4).' },
      availability: { enum: ['available', 'coming_soon', 'unavailable'] },
      native_responses: { type: 'boolean' },
      context_window: { type: 'integer', minimum: 1, description: 'Input plus output tokens the model can attend to.' },
      max_output_tokens: { type: 'integer', minimum: 0, description: 'Most output tokens the model can produce; a larger client cap is a 400. 0 for an embedding model (it generates no tokens).' },
      billing: { type: 'object', required: ['unit', 'per', 'prices'], properties: { unit: { type: 'string' }, per: { type: 'integer' }, prices: { type: 'object', additionalProperties: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } },
        // Priced variants (issue 31 item 8): the first whose request values match prices a request.
        variants: { type: 'array', items: { type: 'object', required: ['when', 'price'], properties: { when: { type: 'object', additionalProperties: { type: 'string' } }, price: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } } } } } },
    },
    // Token-priced offerings always carry their token limits.
    if: { required: ['billing'], properties: { billing: { required: ['unit'], properties: { unit: { const: 'token' } } } } },
    then: { required: ['context_window', 'max_output_tokens'] } } },
  },
};

/** The OpenAPI document as an object; `api` adds the admin API and the service routes of api/*.yaml. */
export function buildOpenApi(gateway: CompiledGateway, version: string, consolePages?: ConsolePages, api: LoadedApiManifest[] = []): Json {
  owners.clear();
  const components: Json = {};
  const paths: Record<string, Json> = {};
  for (const route of gateway.routes) {
    const m = route.manifest;
    // Each client format keeps its error body schema at schemas/<format>/error.json.
    const errorRef = component(gateway, `${m.format}/error.json`, components);
    (paths[m.path] ??= {})[m.method.toLowerCase()] = operation(gateway, route, components, errorRef);
  }
  if (consolePages) Object.assign(paths, consolePaths(consolePages));
  const extra = apiPaths(gateway.root, api, (file) => component(gateway, file, components));
  for (const [path, item] of Object.entries(extra.paths)) {
    if (paths[path]) throw new Error(`api/*.yaml: ${path} is also a route of routes/ or the console`);
    paths[path] = item;
  }
  paths['/api/public/catalog'] = { get: { operationId: 'public-catalog', summary: 'The live catalogue: offerings, availability and prices (spec 4.17). Unauthenticated.', security: [], responses: { '200': { description: 'Success.', content: { 'application/json': { schema: CATALOG_SCHEMA } } } } } };
  return {
    'x-generated': 'AUTO-GENERATED by `npm run codegen` from routes/, providers/, api/, console/ and schemas/. DO NOT EDIT.',
    openapi: '3.1.0',
    // Without it, Prism (via @stoplight/http-spec) reads every schema as draft-07 and would silently skip 2020-12 keywords.
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: 'Unified AI Gateway', version, description: 'One key and one balance in front of many AI vendors.' },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer gw-...' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'x-api-key: gw-...' },
        ...(consolePages ? { consoleSession: CONSOLE_SESSION_SCHEME } : {}),
        ...extra.securitySchemes,
      },
      schemas: components,
    },
  };
}
