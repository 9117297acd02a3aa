/**
 * src/translate/anthropic-output-format.ts: the structured-output schemas the messages-format vendor
 * accepts (its JSON Schema subset) pass as sent; every other one is a 400 unsupported_parameter that
 * names the parameter, where in the schema, and what.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import { checkOutputSchema, requireStructuredOutput } from '../../src/translate/anthropic-output-format.js';

function refusal(fn: () => void): GatewayError {
  try { fn(); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra });

describe('checkOutputSchema', () => {
  it('accepts what client libraries send: zod / LangChain schemas, anyOf with null, local $ref, enums, formats, minItems 0 or 1', () => {
    const schema = object({
      city: { type: 'string', title: 'extract', description: 'the city' },
      when: { type: 'string', format: 'date-time' },
      sky: { anyOf: [{ $ref: '#/$defs/sky' }, { type: 'null' }] },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
      nested: object({ ok: { type: 'boolean' }, n: { type: ['integer', 'null'] } }),
      both: { allOf: [{ $ref: '#/definitions/n' }] },
      fixed: { const: 'x' },
    }, { $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { sky: { type: 'string', enum: ['clear', null] } }, definitions: { n: { type: 'number' } } });
    expect(() => checkOutputSchema(schema, 'response_format')).not.toThrow();
  });

  it.each([
    ['a numeric bound', object({ age: { type: 'integer', minimum: 0 } }), 'schema.properties.age uses "minimum"'],
    ['a string bound', object({ name: { type: 'string', maxLength: 5 } }), 'schema.properties.name uses "maxLength"'],
    ['a pattern', object({ name: { type: 'string', pattern: '^a' } }), '"pattern"'],
    ['an array bound', object({ tags: { type: 'array', items: { type: 'string' }, minItems: 2 } }), '"minItems" other than 0 or 1'],
    ['maxItems', object({ tags: { type: 'array', maxItems: 2 } }), '"maxItems"'],
    ['an open object', { type: 'object', properties: { a: { type: 'string' } } }, 'schema must set "additionalProperties": false'],
    ['an open nested object', object({ inner: { type: 'object', properties: {}, additionalProperties: true } }), 'schema.properties.inner must set "additionalProperties": false'],
    ['oneOf', object({ v: { oneOf: [{ type: 'string' }, { type: 'number' }] } }), '"oneOf"'],
    ['an unknown format', object({ v: { type: 'string', format: 'regex' } }), 'format "regex"'],
    ['an external $ref', object({ v: { $ref: 'https://example.com/s.json' } }), 'not a local'],
    ['a missing definition', object({ v: { $ref: '#/$defs/nope' } }), 'does not define'],
    ['a recursive schema', object({ next: { $ref: '#' } }), 'recursively'],
    ['a recursive definition', object({ tree: { $ref: '#/$defs/node' } }, { $defs: { node: object({ kids: { type: 'array', items: { $ref: '#/$defs/node' } } }) } }), 'recursively'],
    ['an object enum', object({ v: { enum: [{ a: 1 }] } }), '"enum"'],
    ['a schema without type', object({ v: { description: 'anything' } }), 'schema.properties.v has no "type"'],
    ['an unknown type', object({ v: { type: 'date' } }), 'has type "date"'],
    ['object in a type list', object({ v: { type: ['object', 'null'] } }), 'use anyOf'],
  ])('refuses %s', (_name, schema, detail) => {
    const error = refusal(() => checkOutputSchema(schema, 'response_format'));
    expect([error.code, error.status, error.extra.param]).toEqual(['unsupported_parameter', 400, 'response_format']);
    expect(error.message).toContain(detail);
    expect(error.message).toContain("'response_format'");
  });

  it('bounds the work of schemas whose shared definitions expand exponentially', () => {
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i <= 20; i++) defs[`d${i}`] = object({ a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } });
    expect(refusal(() => checkOutputSchema(object({ top: { $ref: '#/$defs/d20' } }, { $defs: defs }), 'p')).message).toContain('more than 5000 subschemas');
  });
});

describe('requireStructuredOutput', () => {
  it('refuses an offering without structured_output, naming the model', () => {
    const error = refusal(() => requireStructuredOutput({ id: 'claude-x', structuredOutput: false } as CompiledOffering, 'output_config.format'));
    expect([error.code, error.status, error.extra.param]).toEqual(['unsupported_parameter', 400, 'output_config.format']);
    expect(error.message).toContain('model "claude-x" does not take structured output');
    expect(() => requireStructuredOutput({ id: 'claude-y', structuredOutput: true } as CompiledOffering, 'p')).not.toThrow();
  });
});
