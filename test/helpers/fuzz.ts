/**
 * Property-based fuzzing helpers: the routes to fuzz (the compiled route table joined with the
 * OpenAPI document), arbitraries built from each route's request schema (valid-ish bodies) and
 * hostile ones (wrong types, huge strings, deep nesting, unicode, prototype-pollution keys, raw
 * JSON texts), a raw HTTP client, and the checks every answer must pass.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { ROUTE_TABLE } from '../../src/generated/route-table.js';
import { projectRoot } from '../../src/paths.js';

// ---------------------------------------------------------------------------------------------
// Routes and schemas
// ---------------------------------------------------------------------------------------------

/** The subset of JSON Schema the request schemas use. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

interface OpenApiParameter { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: JsonSchema }
interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}
interface OpenApiDocument { paths: Record<string, Record<string, OpenApiOperation>>; components: { schemas: Record<string, JsonSchema> } }

/** The generated OpenAPI document (the same file the gateway serves at GET /openapi.json). */
export const OPENAPI = JSON.parse(readFileSync(join(projectRoot(), 'src/generated/openapi.json'), 'utf8')) as OpenApiDocument;

/** Follows `#/components/schemas/...` references (one level is all the document uses). */
export function resolveSchema(schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const found = OPENAPI.components.schemas[name];
  if (!found) throw new Error(`unresolved schema reference ${schema.$ref}`);
  return resolveSchema(found);
}

/** Which client error shape a route answers in (`cohere`: Cohere's `{message}` plus the gateway's `code`, issue 31 item 11). */
export type ErrorShape = 'openai' | 'messages' | 'cohere';

/** What a route's request body is, from its OpenAPI `requestBody`: a JSON object, a multipart form, or none. */
export type BodyKind = 'json' | 'multipart' | 'none';

/** A multipart route's form, from its OpenAPI schema: file parts (`format: binary`) and its text fields' schema. */
export interface FormShape { files: string[]; requiredFiles: string[]; fields: JsonSchema }

/** One route of the route table, with what the fuzzer needs from the OpenAPI document. */
export interface FuzzRoute {
  id: string;
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  /** OpenAPI-style path, e.g. `/v1/models/{model}`. */
  path: string;
  format: string;
  billable: boolean;
  streams: boolean;
  shape: ErrorShape;
  requestSchema: JsonSchema | null;
  params: OpenApiParameter[];
  /** The request body the route takes (none: body-less, e.g. GET, DELETE, or a POST like finalize). */
  body: BodyKind;
  /** A multipart route that takes JSON too (`body.json`, e.g. a temporary file id instead of the part). */
  acceptsJson?: boolean;
  /** The form of a multipart route, else null. */
  form: FormShape | null;
  /** The route table names upstream operations for it (false: the gateway answers it itself). */
  hasUpstream: boolean;
  /** Media types of its 200 answer in the OpenAPI document ([]: undeclared, e.g. a binary download). */
  answerTypes: string[];
  pathParams: string[];
  queryParams: string[];
}

/** The error shape of a client format. */
export function shapeOf(format: string): ErrorShape {
  return format === 'anthropic-messages' ? 'messages' : format === 'cohere' ? 'cohere' : 'openai';
}

/** The fields of an error body of any shape (`{error:{...}}`, or Cohere's flat `{message, code}`); empty when not JSON. */
export interface ErrorFields { message?: unknown; type?: unknown; code?: unknown; param?: unknown }

/** An error body's fields, whatever its shape. */
export function errorFields(text: string): ErrorFields {
  let body: unknown;
  try { body = JSON.parse(text); } catch { return {}; }
  if (!body || typeof body !== 'object') return {};
  const error = (body as { error?: unknown }).error;
  return (error && typeof error === 'object' ? error : body) as ErrorFields;
}

/** Every route of the compiled route table, joined with its OpenAPI operation. */
export function fuzzRoutes(): FuzzRoute[] {
  return ROUTE_TABLE.map((route) => {
    const operation = OPENAPI.paths[route.path]?.[route.method.toLowerCase()];
    if (!operation) throw new Error(`route ${route.id} (${route.method} ${route.path}) is missing from the OpenAPI document`);
    const content = operation.requestBody?.content ?? {};
    const schema = content['application/json']?.schema;
    const formSchema = content['multipart/form-data']?.schema;
    const params = operation.parameters ?? [];
    return {
      id: route.id, method: route.method as FuzzRoute['method'], path: route.path, format: route.format,
      billable: route.billable, streams: route.stream !== null, shape: shapeOf(route.format),
      requestSchema: schema ? resolveSchema(schema) : null, params,
      body: formSchema ? 'multipart' : schema ? 'json' : 'none',
      acceptsJson: Boolean(formSchema && schema),
      form: formSchema ? formShape(formSchema) : null,
      hasUpstream: route.upstreams.length > 0,
      answerTypes: Object.keys(operation.responses?.['200']?.content ?? {}),
      pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
      queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
    };
  });
}

/** A multipart schema (`allOf` of objects) as file parts and a JSON Schema of the text fields. */
export function formShape(schema: JsonSchema): FormShape {
  const members = (s: JsonSchema): JsonSchema[] => { const r = resolveSchema(s); return r.allOf ? r.allOf.flatMap(members) : [r]; };
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();
  for (const member of members(schema)) {
    Object.assign(properties, member.properties ?? {});
    for (const name of member.required ?? []) required.add(name);
  }
  const files = Object.keys(properties).filter((name) => resolveSchema(properties[name]!).format === 'binary');
  const fieldNames = Object.keys(properties).filter((name) => !files.includes(name));
  return {
    files, requiredFiles: files.filter((name) => required.has(name)),
    fields: { type: 'object', properties: Object.fromEntries(fieldNames.map((n) => [n, properties[n]!])), required: fieldNames.filter((n) => required.has(n)), additionalProperties: false },
  };
}

// ---------------------------------------------------------------------------------------------
// Raw JSON text
// ---------------------------------------------------------------------------------------------

/** A JSON fragment written verbatim by `toJsonText` (numbers JSON.stringify cannot produce, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
  toString(): string { return `RawJson(${this.text.length > 80 ? `${this.text.slice(0, 80)}... ${this.text.length} chars` : this.text})`; }
}

const raw = (text: string): RawJson => new RawJson(text);

/** An own, enumerable property, even for `__proto__` (which plain assignment would not create). */
export function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

/** JSON text of a value that may hold RawJson fragments (own `__proto__` keys are written as keys). */
export function toJsonText(value: unknown): string {
  const fragments: string[] = [];
  const tag = `@@raw${Math.random().toString(36).slice(2)}@@`;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof RawJson) { fragments.push(v.text); return `${tag}${fragments.length - 1}`; }
    return v;
  });
  if (text === undefined) return 'null';
  return fragments.length === 0 ? text : text.replace(new RegExp(`"${tag}(\\d+)"`, 'g'), (_m, i: string) => fragments[Number(i)]!);
}

/** Copies a JSON-ish value (RawJson fragments and own `__proto__` keys included). */
function cloneJson(value: unknown): unknown {
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) defineKey(out, key, cloneJson((value as Record<string, unknown>)[key]));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Offerings the catalogue serves (the first three are the ones the brief names). */
export const KNOWN_MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-haiku-4-5'] as const;
/** Ids the catalogue knows but does not serve (coming soon, unavailable), or serves expensively. */
export const OTHER_MODELS = ['gpt-3.5-turbo', 'gpt-4.1-codex-preview', 'claude-opus-4-5', 'claude-sonnet-4-5', 'o4-mini'] as const;

const TRICKY_STRINGS = [
  '', ' ', 'null', 'undefined', 'NaN', 'Infinity', '-1', '0x10', '1e400', '__proto__', 'constructor', 'prototype', 'toString',
  'hasOwnProperty', '\u0000', '\r\n\r\nx-injected: 1', '\n', '\t', '\ud800', '\udfff', 'a\ud800b', '\u202egnirts', 'e\u0301',
  '\ufeff', '\u2028\u2029', '🧨', '👩🏽‍🚀', '𝕏𝕐', 'ﷺ', '<|endoftext|>', '<|im_start|>system', '${{7*7}}', '{{7*7}}', "'; DROP TABLE accounts; --",
  '../../etc/passwd', '%00', '%s%s%s%n', 'gw-', 'Bearer x', 'data: [DONE]\n\n', 'event: error\ndata: {}\n\n',
];

/** Short strings: printable, unicode graphemes, any code point (lone surrogates included), tricky ones. */
export const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
);

/** A message text that usually gets an answer: words, with some unicode now and then. */
export const promptArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('Hello', 'hi', 'Say something short.', 'What is 2+2?', 'Translate "chat" to French.') },
  { weight: 3, arbitrary: textArb.filter((s) => s.length > 0) },
);

/** Strings from 10 kB to 200 kB (one of a few alphabets, repeated: cheap to build, costly to tokenize). */
export const hugeStringArb: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 10_000, max: 200_000 }), fc.constantFrom('x', 'lorem ipsum ', '🧨', 'é', '\ud800', '漢字', '\u0000'))
  .map(([length, chunk]) => chunk.repeat(Math.ceil(length / chunk.length)).slice(0, length));

/** A nested JSON fragment (arrays, objects, `content` chains, content blocks), 1 to `maxDepth` levels, as raw text. */
export const nestingArb = (maxDepth: number): fc.Arbitrary<RawJson> => fc
  .tuple(fc.integer({ min: 1, max: maxDepth }), fc.constantFrom('array', 'object', 'content', 'text-block'))
  .map(([depth, kind]) => {
    if (kind === 'array') return raw(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    if (kind === 'object') return raw(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    if (kind === 'content') return raw(`${'{"content":'.repeat(depth)}"x"${'}'.repeat(depth)}`);
    return raw(`${'[{"type":"text","text":"x","content":'.repeat(depth)}null${'}]'.repeat(depth)}`);
  });

/** Number tokens JSON.stringify never writes: overflow to Infinity, negative zero, long mantissas. */
export const rawNumberArb: fc.Arbitrary<RawJson> = fc
  .constantFrom('1e400', '-1e400', '-0', '-0.0', '1E+2', '1.0', '0.000000000000000000000000001', '123456789012345678901234567890', '-9007199254740993', '4.9e-324')
  .map(raw);

/** Objects carrying prototype-pollution keys as own properties. */
export const protoObjectArb: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.jsonValue({ maxDepth: 2 }))
  .map(([key, value]) => {
    const out: Record<string, unknown> = {};
    defineKey(out, key, key === 'constructor' ? { prototype: { polluted: value } } : { polluted: value });
    return out;
  });

/** Any value a field might wrongly hold. */
export const hostileValueArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, -0.5, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_VALUE, Number.MAX_VALUE, 5e-324, [], {}, [null], [[]], [{}], { type: null }, { type: 5 }) },
  { weight: 2, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }) },
  { weight: 2, arbitrary: textArb },
  { weight: 1, arbitrary: rawNumberArb },
  { weight: 1, arbitrary: hugeStringArb },
  { weight: 1, arbitrary: nestingArb(64) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: protoObjectArb },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 3 }) },
);

/** A `model` value: mostly served offerings (`preferred` first), then known-but-unserved ids, unknown and hostile ones. */
export const modelArb = (preferred: readonly string[] = KNOWN_MODELS): fc.Arbitrary<string> => fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...preferred) },
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_MODELS) },
  { weight: 1, arbitrary: fc.constantFrom(...OTHER_MODELS) },
  { weight: 1, arbitrary: textArb },
  { weight: 1, arbitrary: fc.constantFrom(' gpt-4o-mini', 'GPT-4O-MINI', 'gpt-4o-mini\u0000', 'claude-haiku-4-5-20251001', 'gpt-4o-mini/../gpt-4o', 'anthropic/claude-haiku-4-5', '__proto__', 'constructor') },
);

/** Overrides by schema path (`messages[].content`, `tools[].function.name`, ...): values the schema leaves too open. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

/** Properties the schema does not list but the wire format has, added to objects at a path. */
export type Extras = Record<string, Record<string, fc.Arbitrary<unknown>>>;

function schemaTypes(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type) return [schema.type];
  return schema.properties ? ['object'] : ['any'];
}

/**
 * An arbitrary of values that satisfy `schema` (the subset above), leaves replaced by `hints` and
 * objects completed by `extras`. Required properties are always present, optional ones sometimes.
 */
export function arbitraryFromSchema(schema: JsonSchema, opts: { hints?: Hints; extras?: Extras } = {}, path = '', depth = 0): fc.Arbitrary<unknown> {
  const hints = opts.hints ?? {};
  const hint = hints[path];
  if (hint) return hint;
  const resolved = resolveSchema(schema);
  if (resolved.enum) return fc.constantFrom(...resolved.enum);
  if (resolved.anyOf) return fc.oneof(...resolved.anyOf.map((s) => arbitraryFromSchema(s, opts, path, depth)));
  const options = schemaTypes(resolved).map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null': return fc.constant(null);
      case 'boolean': return fc.boolean();
      case 'integer': {
        const min = resolved.minimum ?? -1000;
        return fc.integer({ min, max: resolved.maximum ?? min + 4096 });
      }
      case 'number': {
        const min = resolved.minimum ?? -1000;
        const max = resolved.maximum ?? min + 1000;
        return fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
      }
      case 'string': {
        const minLength = resolved.minLength ?? 0;
        const maxLength = resolved.maxLength ?? 40;
        return fc.oneof(promptArb, textArb).filter((s) => s.length >= minLength && s.length <= maxLength);
      }
      case 'array': {
        const items = resolved.items ? arbitraryFromSchema(resolved.items, opts, `${path}[]`, depth + 1) : fc.jsonValue({ maxDepth: 2 });
        const minLength = resolved.minItems ?? 0;
        return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(resolved.maxItems ?? 3, 3)) });
      }
      case 'object': {
        if (!resolved.properties || depth > 4) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, sub] of Object.entries(resolved.properties)) record[name] = arbitraryFromSchema(sub, opts, path ? `${path}.${name}` : name, depth + 1);
        for (const [name, arb] of Object.entries(opts.extras?.[path] ?? {})) record[name] = arb;
        // Required properties always, and a few optional ones: every optional one at once would make
        // nearly every body hit some refusal (e.g. a parameter a model does not support).
        const required = (resolved.required ?? []).filter((name) => name in record);
        const optional = Object.keys(record).filter((name) => !required.includes(name));
        return fc.tuple(fc.subarray(optional, { maxLength: Math.min(4, optional.length) }), fc.record(record)).map(([chosen, values]) => {
          const out: Record<string, unknown> = {};
          for (const name of [...required, ...chosen]) out[name] = values[name];
          return out;
        });
      }
      default: return fc.jsonValue({ maxDepth: 2 });
    }
  });
  return options.length === 1 ? options[0]! : fc.oneof(...options);
}

const imageUrl = fc.constantFrom('https://example.com/cat.png', 'data:image/png;base64,iVBORw0KGgo=', 'file:///etc/passwd', 'http://169.254.169.254/latest/meta-data/', '');
const jsonSchemaObject = fc.constantFrom<unknown>({ type: 'object', properties: {} }, { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, {});

const chatPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text: promptArb }),
  fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: imageUrl }, { requiredKeys: [] }) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('input_audio', 'file', 'refusal', 'x'), text: textArb }, { requiredKeys: ['type'] }),
);
const messagesBlock = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('text'), text: promptArb }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('image'), source: fc.record({ type: fc.constantFrom('base64', 'url'), media_type: fc.constant('image/png'), data: fc.constant('iVBORw0KGgo='), url: imageUrl }, { requiredKeys: [] }) }, { requiredKeys: ['type'] }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('tool_result'), tool_use_id: fc.constantFrom('toolu_1', ''), content: fc.oneof(promptArb, fc.constant([{ type: 'text', text: 'r' }])) }, { requiredKeys: ['type'] }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('tool_use'), id: fc.constant('toolu_1'), name: fc.constant('get_weather'), input: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['type'] }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('document', 'thinking', 'x'), text: textArb }, { requiredKeys: ['type'] }) },
);
const messagesTool = fc.oneof(
  fc.record({ name: fc.constantFrom('get_weather', 'x'), description: textArb, input_schema: jsonSchemaObject }, { requiredKeys: ['name'] }),
  // The request schema lets a tool be any object: odd `max_uses` and `type` values are schema-valid.
  fc.record({
    type: fc.constantFrom('web_search_20250305', 'web_search_20260101'), name: fc.constant('web_search'),
    max_uses: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(0, -1, -1000, 1.5, 1e21, '3', null) }),
  }, { requiredKeys: ['type', 'name'] }),
  fc.record({ type: fc.oneof(fc.constantFrom<unknown>('custom', 'bash_20250124', 'code_execution_20250522', 'x'), fc.constantFrom<unknown>(5, null, true, ['web_search_20250305'])), name: fc.constantFrom('bash', 'x') }),
);
const messagesArb = (content: fc.Arbitrary<unknown>) => fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content }), { minLength: 1, maxLength: 3 })
  .map((list) => (list[0]!.role === 'user' ? list : [{ role: 'user', content: 'hi' }, ...list]));
const messagesContent = fc.oneof({ weight: 3, arbitrary: promptArb }, { weight: 2, arbitrary: fc.array(messagesBlock, { minLength: 1, maxLength: 3 }) });
const responsesItem = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'system', 'developer', 'assistant'), content: fc.oneof(promptArb, fc.constant([{ type: 'input_text', text: 'hi' }])) }),
  fc.record({ type: fc.constant('message'), role: fc.constantFrom('user', 'assistant'), content: fc.array(fc.record({ type: fc.constantFrom('input_text', 'output_text', 'input_image', 'x'), text: promptArb }), { maxLength: 2 }) }),
  fc.record({ type: fc.constant('function_call'), call_id: fc.constant('call_1'), name: fc.constant('get_weather'), arguments: fc.constantFrom('{}', '{"city":"Paris"}', 'not json') }),
  fc.record({ type: fc.constant('function_call_output'), call_id: fc.constantFrom('call_1', 'call_unknown'), output: promptArb }),
  fc.record({ type: fc.constantFrom('reasoning', 'item_reference', 'x'), id: fc.constant('rs_1') }, { requiredKeys: ['type'] }),
);

/** Hints and extras of each POST route, and top-level properties to always send (`also`). */
export const ROUTE_HINTS: Record<string, { hints: Hints; extras?: Extras; also?: string[] }> = {
  'chat-completions': {
    hints: {
      model: modelArb(),
      stream: fc.boolean(),
      max_tokens: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 40_000 })),
      max_completion_tokens: fc.integer({ min: 1, max: 40_000 }),
      n: fc.integer({ min: 1, max: 3 }),
      'messages[].content': fc.oneof({ weight: 4, arbitrary: promptArb }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.array(chatPart, { maxLength: 3 }) }),
      'messages[].tool_calls': fc.array(fc.record({ id: fc.constant('call_1'), type: fc.constant('function'), function: fc.record({ name: fc.constant('get_weather'), arguments: fc.constantFrom('{}', '{"city":"Paris"}', 'not json') }) }), { maxLength: 2 }),
      'tools[].type': fc.constantFrom('function', 'web_search', 'x'),
      'tools[].function.parameters': jsonSchemaObject,
      'tool_choice': fc.oneof(fc.constantFrom('none', 'auto', 'required'), fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('get_weather', 'nope') }) })),
      'response_format.type': fc.constantFrom('text', 'json_object', 'json_schema', 'x'),
      logit_bias: fc.dictionary(fc.constantFrom('50256', '1', 'x'), fc.integer({ min: -100, max: 100 }), { maxKeys: 2 }),
    },
    also: ['stream'],
  },
  responses: {
    hints: {
      model: modelArb(['gpt-4o-mini', 'gpt-4o']),
      stream: fc.boolean(),
      input: fc.oneof({ weight: 3, arbitrary: promptArb }, { weight: 2, arbitrary: fc.array(responsesItem, { minLength: 1, maxLength: 3 }) }),
      max_output_tokens: fc.oneof(fc.integer({ min: 16, max: 64 }), fc.integer({ min: 1, max: 40_000 })),
      max_tool_calls: fc.integer({ min: 1, max: 8 }),
      'tools[].type': fc.constantFrom('function', 'web_search', 'web_search_preview', 'code_interpreter', 'image_generation', 'file_search', 'computer_use_preview', 'x'),
      tool_choice: fc.oneof(fc.constantFrom('none', 'auto', 'required'), fc.record({ type: fc.constantFrom('function', 'web_search') })),
    },
    extras: { 'tools[]': { name: fc.constantFrom('get_weather', ''), parameters: jsonSchemaObject } },
    // The schema requires only `model`; without input (or instructions) every body is a 400.
    also: ['input', 'max_output_tokens', 'stream'],
  },
  messages: {
    hints: {
      model: modelArb(['claude-haiku-4-5']),
      stream: fc.boolean(),
      max_tokens: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 70_000 })),
      top_k: fc.integer({ min: 0, max: 500 }),
      messages: messagesArb(messagesContent),
      system: fc.oneof(promptArb, fc.array(fc.record({ type: fc.constant('text'), text: promptArb, cache_control: fc.constant({ type: 'ephemeral' }) }, { requiredKeys: ['type', 'text'] }), { maxLength: 2 })),
      tools: fc.array(messagesTool, { maxLength: 2 }),
      tool_choice: fc.record({ type: fc.constantFrom('auto', 'any', 'none', 'tool'), name: fc.constant('get_weather') }, { requiredKeys: ['type'] }),
      metadata: fc.record({ user_id: textArb }, { requiredKeys: [] }),
    },
    also: ['stream'],
  },
  'count-tokens': {
    hints: {
      model: modelArb(['claude-haiku-4-5']),
      messages: messagesArb(messagesContent),
      system: fc.oneof(promptArb, fc.array(fc.record({ type: fc.constant('text'), text: promptArb }), { maxLength: 2 })),
      tools: fc.array(messagesTool, { maxLength: 2 }),
    },
  },
};

/** A body built from a route's request schema and hints: schema-valid apart from what the hints widen. */
export function validishBodyArb(route: FuzzRoute): fc.Arbitrary<Record<string, unknown>> {
  if (!route.requestSchema) throw new Error(`route ${route.id} has no request schema`);
  const tuning = ROUTE_HINTS[route.id] ?? { hints: { model: modelArb() } };
  const schema = { ...route.requestSchema, required: [...new Set([...(route.requestSchema.required ?? []), ...(tuning.also ?? [])])] };
  return arbitraryFromSchema(schema, tuning) as fc.Arbitrary<Record<string, unknown>>;
}

/** Every object and array node of a value, as [container, path] pairs (root first). */
function containers(value: unknown, out: Array<Record<string, unknown> | unknown[]> = []): Array<Record<string, unknown> | unknown[]> {
  if (value === null || typeof value !== 'object' || value instanceof RawJson) return out;
  out.push(value as Record<string, unknown> | unknown[]);
  for (const child of Array.isArray(value) ? value : Object.values(value)) containers(child, out);
  return out;
}

/** One change to a valid-ish body. */
type Mutation =
  | { kind: 'set'; at: number; key: string; value: unknown }
  | { kind: 'delete'; at: number; pick: number }
  | { kind: 'proto'; at: number; value: Record<string, unknown> };

function applyMutation(body: Record<string, unknown>, mutation: Mutation): unknown {
  const copy = cloneJson(body) as Record<string, unknown>;
  const nodes = containers(copy);
  const node = nodes[mutation.at % nodes.length]!;
  if (mutation.kind === 'proto') {
    if (Array.isArray(node)) node.push(mutation.value);
    else for (const key of Object.keys(mutation.value)) defineKey(node, key, mutation.value[key]);
  } else if (mutation.kind === 'set') {
    if (Array.isArray(node)) node[node.length === 0 ? 0 : Number.parseInt(mutation.key, 36) % node.length || 0] = mutation.value;
    else defineKey(node, mutation.key, mutation.value);
  } else {
    const keys = Array.isArray(node) ? node.map((_v, i) => String(i)) : Object.keys(node);
    if (keys.length > 0) {
      const key = keys[mutation.pick % keys.length]!;
      if (Array.isArray(node)) node.splice(Number(key), 1);
      else delete node[key];
    }
  }
  return copy;
}

/** Keys a mutation sets: the route's schema properties (wrong values for known fields) or anything else. */
function mutationKeyArb(route: FuzzRoute): fc.Arbitrary<string> {
  const known = Object.keys(route.requestSchema?.properties ?? {});
  const nested = ['role', 'content', 'type', 'text', 'name', 'max_uses', 'input_schema', 'function', 'arguments', 'tool_call_id', 'image_url', 'source', 'cache_control'];
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known) },
    { weight: 3, arbitrary: fc.constantFrom(...nested) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'model ', '') },
    { weight: 1, arbitrary: textArb },
  );
}

/** A hostile request body: a mutated valid-ish body, any JSON value, or raw text. */
export function hostileBodyArb(route: FuzzRoute): fc.Arbitrary<{ text: string; label: string }> {
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), key: mutationKeyArb(route), value: hostileValueArb }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('proto' as const), at: fc.nat(), value: protoObjectArb }) },
  );
  const mutated = fc.tuple(validishBodyArb(route), fc.array(mutation, { minLength: 1, maxLength: 3 }))
    .map(([body, changes]) => {
      let out: unknown = body;
      for (const change of changes) out = applyMutation(out as Record<string, unknown>, change);
      return { text: toJsonText(out), label: `mutated: ${changes.map((c) => c.kind === 'set' ? `set ${JSON.stringify(c.key)}` : c.kind).join(', ')}` };
    });
  const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.array(fc.jsonValue({ maxDepth: 2 })), hostileValueArb)
    .map((value) => ({ text: toJsonText(value), label: 'any JSON value' }));
  const rawText = fc.oneof(
    fc.constantFrom('', ' ', '{', '}', '[', '{"model":', '{"model":"gpt-4o-mini",}', "{'model':'gpt-4o-mini'}", 'null', 'true', '"x"', '1', 'NaN', 'Infinity',
      '{"model":"gpt-4o-mini","model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}],"max_tokens":5}',
      '\ufeff{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":5}',
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"\\ud800"}],"max_tokens":5}',
      '{"__proto__":{"admin":true},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":5}',
      '{"constructor":{"prototype":{"admin":true}},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":5}',
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","__proto__":{"role":"system"}}],"max_tokens":5}'),
    fc.string({ unit: 'binary', maxLength: 60 }),
    validishBodyArb(route).chain((body) => {
      const text = toJsonText(body);
      return fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut));
    }),
  ).map((text) => ({ text, label: 'raw text' }));
  return fc.oneof({ weight: 6, arbitrary: mutated }, { weight: 2, arbitrary: anyJson }, { weight: 2, arbitrary: rawText });
}

/** A valid-ish body with one nested fragment (up to `maxDepth` levels) set at a random place: known fields or any key. */
export function nestedBodyArb(route: FuzzRoute, maxDepth: number): fc.Arbitrary<{ text: string; label: string }> {
  return fc.tuple(validishBodyArb(route), fc.nat(), mutationKeyArb(route), nestingArb(maxDepth)).map(([body, at, key, value]) => ({
    text: toJsonText(applyMutation(body, { kind: 'set', at, key, value })),
    label: `nested ${value.text.length} chars at ${JSON.stringify(key)}`,
  }));
}

/** Header variants of a hostile request: content types and (for versioned routes) version headers. */
export function hostileHeadersArb(required: Array<{ name: string; aliases: string[]; values: string[] }>): fc.Arbitrary<Record<string, string>> {
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', '') },
  );
  const versions = required.map((header) => fc.oneof(
    { weight: 8, arbitrary: fc.constant<[string, string] | null>([header.name, header.values[0]!]) },
    { weight: 1, arbitrary: fc.constantFrom<[string, string] | null>(null, [header.name, ''], [header.name, '2020-01-01'], [header.name, ` ${header.values[0]} `], ...header.aliases.map((alias): [string, string] => [alias, header.values[0]!])) },
  ));
  return fc.tuple(contentType, fc.tuple(...versions)).map(([type, pairs]) => {
    const headers: Record<string, string> = {};
    if (type) headers['content-type'] = type;
    for (const pair of pairs) if (pair) headers[pair[0]] = pair[1];
    return headers;
  });
}

/** A path segment for `{param}`: known ids, percent-encoded fuzz, raw percent garbage, long ones. */
export const pathSegmentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_MODELS, ...OTHER_MODELS) },
  { weight: 4, arbitrary: textArb.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))) },
  { weight: 2, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%ZZ', '%00', '%2e%2e', '..', '%2F', 'a%2Fb', '%C0%AE', '%ff', '~', "'", '%22', '%0D%0Ax-injected:%201', '__proto__', 'constructor') },
  { weight: 1, arbitrary: fc.integer({ min: 90, max: 3000 }).map((n) => 'm'.repeat(n)) },
);

/** A query string for GET routes (without `?`), or ''. */
export const queryArb = (names: string[]): fc.Arbitrary<string> => fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...names), fc.oneof(fc.constantFrom('CHAT', 'chat', 'CODE', 'VISION', 'EMBEDDING', ''), textArb.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))))).map(([n, v]) => `${n}=${v}`) },
  { weight: 2, arbitrary: fc.constantFrom(...names.flatMap((n) => [`${n}=CHAT&${n}=CODE`, `${n}[]=CHAT`, `${n}[x]=1`, `${n}=%ZZ`, `${n}=%`, `${n}`, `${n}=%0D%0A`, '__proto__[x]=1', 'constructor[prototype][x]=1', '&&&', '=', `${n}=${'x'.repeat(5000)}`])) },
);

// ---------------------------------------------------------------------------------------------
// Raw HTTP
// ---------------------------------------------------------------------------------------------

/** One HTTP exchange as read off the socket. */
export interface RawResponse {
  status: number;
  /** The header lines exactly as received (without the status line). */
  headerLines: string[];
  /** Lower-cased header name -> value (repeated headers joined with ", "). */
  headers: Record<string, string>;
  /** The body, de-chunked. */
  body: string;
}

/** De-chunks a chunked body; `complete` once the last (zero-size) chunk arrived. */
function dechunk(data: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) return { body: Buffer.concat(parts), complete: false };
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) return { body: Buffer.concat(parts), complete: false };
    if (size === 0) return { body: Buffer.concat(parts), complete: true };
    if (data.length < lineEnd + 2 + size + 2) return { body: Buffer.concat(parts), complete: false };
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/**
 * Sends one request on a fresh socket (`Connection: close`) and reads the whole answer, so the test
 * sees header lines byte for byte (a CR/LF smuggled into a value would show up as an extra line).
 */
export function rawHttp(baseUrl: string, opts: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number }): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const body = opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(opts.body, 'utf8');
  const headers: Record<string, string> = { host: url.host, connection: 'close', ...opts.headers };
  if (body && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['content-length'] = String(body.length);
  const head = `${opts.method} ${opts.path} HTTP/1.1\r\n${Object.entries(headers).map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const timer = setTimeout(() => { finish(new Error(`no complete answer to ${opts.method} ${opts.path} within ${opts.timeoutMs ?? 30_000} ms`)); }, opts.timeoutMs ?? 30_000);
    /** The answer once it is complete (by content-length, the last chunk, or the socket closing). */
    const parse = (closed: boolean): RawResponse | null => {
      const data = Buffer.concat(chunks);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const lines = data.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      const headerLines = lines.slice(1);
      const parsed: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).toLowerCase();
        const value = line.slice(colon + 1).trim();
        parsed[name] = parsed[name] === undefined ? value : `${parsed[name]}, ${value}`;
      }
      const rest = data.subarray(end + 4);
      const chunked = (parsed['transfer-encoding'] ?? '').includes('chunked');
      const length = parsed['content-length'] === undefined ? null : Number(parsed['content-length']);
      const decoded = chunked ? dechunk(rest) : null;
      const complete = closed || (decoded ? decoded.complete : length !== null ? rest.length >= length : opts.method === 'HEAD');
      if (!complete) return null;
      return { status, headerLines, headers: parsed, body: (decoded ? decoded.body : rest).toString('utf8') };
    };
    const finish = (error: Error | null, response?: RawResponse): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (response) resolve(response);
      else reject(error ?? new Error('no answer'));
    };
    socket.on('connect', () => {
      socket.write(head);
      if (body) socket.write(body);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const response = parse(false);
      if (response) finish(null, response);
    });
    socket.on('error', () => undefined); // a reset after the answer (e.g. 413 mid-upload) still leaves the answer read
    socket.on('close', () => {
      const response = parse(true);
      if (response) finish(null, response);
      else finish(new Error(`incomplete answer to ${opts.method} ${opts.path}: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/** Header names a gateway answer may carry. */
export const ALLOWED_RESPONSE_HEADERS = new Set([
  'content-type', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date', 'cache-control',
  'x-request-id', 'retry-after', 'retry-after-ms',
  // A binary download (GET /v1/files/{file_id}/content) names its file.
  'content-disposition',
]);

/** A header of the gateway's own namespace. */
const GATEWAY_HEADER = /^x-gateway-[a-z0-9-]+$/;

/** A valid header line: a token name, a colon, a value of visible characters, spaces and tabs only. */
const HEADER_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[ \t]*[\x21-\x7e\x80-\xff]*(?:[ \t]+[\x21-\x7e\x80-\xff]+)*[ \t]*$/;

/** Problems with an answer's header lines: CR/LF or control characters, unknown names, a bad x-request-id. */
export function headerProblems(res: RawResponse, opts: { requireRequestId: boolean }): string[] {
  const problems: string[] = [];
  for (const line of res.headerLines) {
    if (!HEADER_LINE.test(line)) problems.push(`malformed header line ${JSON.stringify(line)}`);
    const name = line.slice(0, line.indexOf(':')).toLowerCase();
    // The gateway's own namespace: the settled quantity and charge a route's meter declares (X-Gateway-Cost-USD, ...).
    if (!ALLOWED_RESPONSE_HEADERS.has(name) && !GATEWAY_HEADER.test(name)) problems.push(`unexpected header ${JSON.stringify(name)}`);
  }
  const id = res.headers['x-request-id'];
  if (opts.requireRequestId && (id === undefined || !/^req_[0-9a-f]{24}$/.test(id))) problems.push(`x-request-id ${JSON.stringify(id)} does not match ^req_[0-9a-f]{24}$`);
  return problems;
}

/** Stack frames, file paths and module paths that must never reach a client. */
const LEAKS: RegExp[] = [
  /\/work\//, /node_modules/, /file:\/\//, /node:internal/, /\bat (?:async )?[\w$.<>[\] ]*\(?[^()\s]*:\d+:\d+\)?/, /\n\s+at /,
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError): /, /Maximum call stack/, /\.ts:\d+/, /\.js:\d+/,
];

/** What in a text looks like a stack trace or an internal path, or null. */
export function leakIn(text: string): string | null {
  for (const pattern of LEAKS) {
    const found = pattern.exec(text);
    if (found) return `${pattern} matched ${JSON.stringify(text.slice(Math.max(0, found.index - 40), found.index + 80))}`;
  }
  return null;
}

/** Problems with an error body in the route's shape (chat/responses `{error:{message,type,code}}`; messages `{type:"error", error:{type,message}}`; cohere `{message, code}`). */
export function errorShapeProblems(shape: ErrorShape, text: string): string[] {
  let body: unknown;
  try { body = JSON.parse(text); } catch { return [`error body is not JSON: ${JSON.stringify(text.slice(0, 200))}`]; }
  const record = body as { type?: unknown; error?: Record<string, unknown> } | null;
  if (shape === 'cohere') return cohereErrorProblems(record as Record<string, unknown> | null, text);
  const error = record && typeof record === 'object' && record.error && typeof record.error === 'object' ? record.error : null;
  if (!error) return [`error body has no error object: ${text.slice(0, 200)}`];
  const problems: string[] = [];
  if (typeof error.message !== 'string' || error.message.length === 0) problems.push('error.message is not a non-empty string');
  if (typeof error.type !== 'string') problems.push('error.type is not a string');
  if (shape === 'openai' && typeof error.code !== 'string') problems.push('error.code is not a string');
  if (shape === 'messages' && record!.type !== 'error') problems.push('type is not "error"');
  return problems.map((p) => `${p}: ${text.slice(0, 200)}`);
}

/** Problems with a Cohere-shaped error body: a non-empty `message` and the gateway's `code`, flat (no `error` object). */
function cohereErrorProblems(body: Record<string, unknown> | null, text: string): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [`error body is not an object: ${text.slice(0, 200)}`];
  const problems: string[] = [];
  if (typeof body.message !== 'string' || body.message.length === 0) problems.push('message is not a non-empty string');
  if (typeof body.code !== 'string') problems.push('code is not a string');
  if (body.error !== undefined) problems.push('has an error object (not Cohere\'s shape)');
  return problems.map((p) => `${p}: ${text.slice(0, 200)}`);
}

/** Problems with a successful stream: every frame an `event:`/`data:` frame, every data JSON (or `[DONE]`), no error event. */
export function sseProblems(text: string): string[] {
  const problems: string[] = [];
  const frames = text.split('\n\n').filter((f) => f.trim().length > 0);
  if (frames.length === 0) problems.push('empty stream');
  for (const frame of frames) {
    let event: string | null = null;
    for (const line of frame.split('\n')) {
      if (line.startsWith('event: ')) { event = line.slice(7); continue; }
      if (line.startsWith(':')) continue;
      if (!line.startsWith('data: ')) { problems.push(`not an SSE line: ${JSON.stringify(line.slice(0, 120))}`); continue; }
      const data = line.slice(6);
      if (data === '[DONE]') continue;
      let parsed: unknown;
      try { parsed = JSON.parse(data); } catch { problems.push(`SSE data is not JSON: ${JSON.stringify(data.slice(0, 120))}`); continue; }
      const type = (parsed as { type?: unknown }).type;
      if (event === 'error' || type === 'error' || (parsed as { error?: unknown }).error) problems.push(`error event in a 200 stream: ${data.slice(0, 200)}`);
    }
  }
  return problems;
}

/** FUZZ_RUNS (default 150) runs per property; FUZZ_SEED (default fixed) for reproducibility. */
export function fuzzSettings(): { numRuns: number; seed: number } {
  const numRuns = Number(process.env.FUZZ_RUNS ?? 150);
  const seed = Number(process.env.FUZZ_SEED ?? 20_261_122);
  return { numRuns: Number.isInteger(numRuns) && numRuns > 0 ? numRuns : 150, seed: Number.isInteger(seed) ? seed : 20_261_122 };
}

/**
 * fast-check parameters for one fuzz property: `numRuns` cases from `seed` within `timeLimitMs`.
 * Running out of time before `numRuns` cases FAILS, saying so: fast-check on its own reports an
 * interrupted run as a quiet success, so a slow gateway would pass having checked only a few cases.
 * Uses the `interruptAfterTimeLimit` plugin with `failOnInterrupt` (fast-check 4.10 deprecates the
 * `interruptAfterTimeLimit` + `markInterruptAsFailure` parameters in its favour; same behaviour).
 */
export function fuzzParameters(opts: { numRuns: number; seed: number; timeLimitMs: number }): fc.Parameters<unknown> {
  const { numRuns, seed, timeLimitMs } = opts;
  return {
    numRuns,
    seed,
    plugins: [fc.interruptAfterTimeLimit(timeLimitMs, { failOnInterrupt: true })],
    reporter: (details) => {
      if (!details.failed) return;
      if (details.interrupted && details.counterexample === null) {
        throw new Error(`fuzz: the ${timeLimitMs} ms time limit ran out before ${numRuns} cases (only ${details.numRuns} ran; seed ${details.seed}); `
          + 'a case got slower, or lower FUZZ_RUNS');
      }
      // Any other failure: fast-check's own report (seed, path, shrunk counterexample), its error as the cause.
      throw new Error(fc.defaultReportMessage(details), { cause: details.errorInstance });
    },
  };
}

