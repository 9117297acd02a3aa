/**
 * The messages-format vendor's structured output (`output_config.format: {type: json_schema, schema}`,
 * ../shared/specs/anthropic `OutputConfig`, `JsonOutputFormat`), shared by the translators that reach
 * it (openai-chat--anthropic-messages, anthropic-messages--anthropic-messages): whether the offering
 * takes it (`structured_output:` in its YAML), and whether a schema is one the vendor accepts, so a
 * schema it would refuse is a 400 before anything is reserved or sent.
 *
 * The vendor compiles the schema into a grammar and takes a subset of JSON Schema (its structured
 * outputs guide, "JSON Schema limitations"; the keywords its own SDK keeps, @anthropic-ai/sdk
 * lib/transform-json-schema): every object sets `additionalProperties: false`; no numeric,
 * string-length or pattern bounds, no array bounds beyond `minItems` 0 or 1; local `$ref` only and
 * nothing recursive; `enum`/`const` of primitives; `anyOf` and `allOf` (not `oneOf`); string
 * `format` from a fixed list. Anything else is refused here, naming where and what.
 */
import type { CompiledOffering } from '../config/types.js';
import { GatewayError } from '../errors.js';

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords every schema may carry. */
const COMMON = new Set(['type', 'enum', 'const', 'anyOf', 'allOf', '$ref', '$defs', 'definitions', '$schema', 'description', 'title']);
/** Keywords a schema of one type may carry besides the common ones. */
const BY_TYPE: Record<string, ReadonlySet<string>> = {
  object: new Set(['properties', 'required', 'additionalProperties']),
  string: new Set(['format']),
  array: new Set(['items', 'minItems']),
};
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);
const isPrimitive = (v: unknown): boolean => v === null || typeof v !== 'object';
/** Subschemas checked at most, references expanded (far beyond any schema a client library sends). */
const MAX_STEPS = 5000;

/** Refuses structured output on an offering that does not declare `structured_output: true`. */
export function requireStructuredOutput(offering: CompiledOffering | undefined, param: string): void {
  if (offering?.structuredOutput === true) return;
  const model = offering ? `model "${offering.id}"` : 'this model';
  throw new GatewayError('unsupported_parameter', `The parameter '${param}' is not supported: ${model} does not take structured output; it only produces plain text.`, { param });
}

/** Throws a 400 naming `param` when the vendor would refuse `schema` as a structured-output schema. */
export function checkOutputSchema(schema: unknown, param: string): void {
  const fail = (at: string, why: string): never => {
    throw new GatewayError('unsupported_parameter', `The parameter '${param}' is not supported as sent: ${at} ${why}; this model's structured output takes a subset of JSON Schema.`, { param });
  };
  let steps = 0;
  const walk = (node: unknown, at: string, refs: readonly string[]): void => {
    // References expand where they are used: a bound keeps a schema of many shared definitions cheap to check.
    if (++steps > MAX_STEPS) return fail('schema', `has more than ${MAX_STEPS} subschemas once its references are expanded`);
    if (!isRecord(node)) return fail(at, 'is not a schema object');
    const types = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
    const bad = types.find((t) => typeof t !== 'string' || !TYPES.has(t));
    if (bad !== undefined) fail(at, `has type ${JSON.stringify(bad)}`);
    if (types.length > 1 && types.some((t) => t === 'object' || t === 'array')) fail(at, 'lists object or array in a type list (use anyOf)');
    const single = types.length === 1 ? (types[0] as string) : undefined;
    for (const key of Object.keys(node)) {
      if (!COMMON.has(key) && !(single !== undefined && BY_TYPE[single]?.has(key))) fail(at, `uses "${key}", which is not supported`);
    }
    if (types.length === 0 && !['anyOf', 'allOf', 'enum', 'const', '$ref'].some((k) => k in node)) fail(at, 'has no "type"');
    if ('enum' in node && !(Array.isArray(node.enum) && node.enum.length > 0 && node.enum.every(isPrimitive))) fail(at, 'has an "enum" that is not a list of strings, numbers, booleans or null');
    if ('const' in node && !isPrimitive(node.const)) fail(at, 'has a "const" that is not a string, number, boolean or null');
    if (single === 'object') checkObject(node, at, refs);
    if (single === 'string' && node.format !== undefined && !FORMATS.has(node.format as string)) fail(at, `has format ${JSON.stringify(node.format)} (supported: ${[...FORMATS].join(', ')})`);
    if (single === 'array') {
      if (node.minItems !== undefined && node.minItems !== 0 && node.minItems !== 1) fail(at, 'has a "minItems" other than 0 or 1');
      if (node.items !== undefined) walk(node.items, `${at}.items`, refs);
    }
    for (const key of ['anyOf', 'allOf'] as const) {
      if (key in node && !(Array.isArray(node[key]) && (node[key] as unknown[]).length > 0)) fail(at, `has a "${key}" that is not a non-empty list`);
      (Array.isArray(node[key]) ? (node[key] as unknown[]) : []).forEach((branch, i) => walk(branch, `${at}.${key}[${i}]`, refs));
    }
    for (const key of ['$defs', 'definitions'] as const) {
      if (isRecord(node[key])) for (const [name, def] of Object.entries(node[key])) walk(def, `${at}.${key}.${name}`, refs);
    }
    if ('$ref' in node) followRef(node.$ref, at, refs);
  };
  const checkObject = (node: Rec, at: string, refs: readonly string[]): void => {
    if (node.additionalProperties !== false) fail(at, 'must set "additionalProperties": false (every object must)');
    if (node.properties !== undefined && !isRecord(node.properties)) fail(at, 'has "properties" that is not an object');
    for (const [name, prop] of Object.entries(isRecord(node.properties) ? node.properties : {})) walk(prop, `${at}.properties.${name}`, refs);
    if (node.required !== undefined && !(Array.isArray(node.required) && node.required.every((r) => typeof r === 'string'))) fail(at, 'has "required" that is not a list of names');
  };
  const followRef = (ref: unknown, at: string, refs: readonly string[]): void => {
    if (typeof ref !== 'string' || !ref.startsWith('#')) return fail(at, `refers to ${JSON.stringify(ref)}, which is not a local "#/..." reference`);
    if (refs.includes(ref)) return fail(at, `refers to ${ref} recursively (recursive schemas are not supported)`);
    let target: unknown = schema;
    for (const part of ref.slice(1).split('/').filter((p) => p !== '')) target = isRecord(target) ? target[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
    if (target === undefined) return fail(at, `refers to ${ref}, which the schema does not define`);
    walk(target, `schema${ref.slice(1).replaceAll('/', '.')}`, [...refs, ref]);
  };
  walk(schema, 'schema', []);
}
