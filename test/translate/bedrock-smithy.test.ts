/**
 * The golden fixtures of every translator to Bedrock's Converse checked against Bedrock's Smithy model
 * (docs/vendors/bedrock-converse.smithy.json, the Converse part of bedrock-runtime.json): the request
 * bodies the gateway sends (ConverseRequest, without its HTTP label `modelId`), the answers it reads
 * (ConverseResponse) and each ConverseStream event (ConverseStreamOutput's member named by the frame's
 * event type). Members must be known, required ones present, a union must set exactly one member, enums
 * take their values, strings their patterns. Shapes outside the subset are not expanded.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { SseParser } from '../../src/translate/sse.js';

type Shape = { type: string; members?: Record<string, { target: string; traits?: Record<string, unknown> }>; member?: { target: string }; value?: { target: string }; traits?: Record<string, unknown> };
const NS = 'com.amazonaws.bedrockruntime#';
const model = JSON.parse(readFileSync(join(projectRoot(), 'docs/vendors/bedrock-converse.smithy.json'), 'utf8')) as { shapes: Record<string, Shape> };

/** Bedrock pads stream events with a `p` member the model does not name (to hide payload sizes). */
const STREAM_PADDING = 'p';

function check(value: unknown, target: string, path: string, errors: string[], extra: readonly string[] = []): void {
  const primitive: Record<string, (v: unknown) => boolean> = {
    'smithy.api#String': (v) => typeof v === 'string', 'smithy.api#Blob': (v) => typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v),
    'smithy.api#Integer': Number.isInteger, 'smithy.api#Long': Number.isInteger, 'smithy.api#Float': (v) => typeof v === 'number',
    'smithy.api#Boolean': (v) => typeof v === 'boolean', 'smithy.api#Document': () => true,
  };
  if (primitive[target]) { if (!primitive[target](value)) errors.push(`${path}: not a ${target.slice(11)}`); return; }
  const shape = model.shapes[target];
  if (!shape) return; // outside the subset: not expanded
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  switch (shape.type) {
    case 'string': {
      if (typeof value !== 'string') { errors.push(`${path}: not a string`); return; }
      const pattern = shape.traits?.['smithy.api#pattern'];
      if (typeof pattern === 'string' && !new RegExp(pattern).test(value)) errors.push(`${path}: ${value} does not match ${pattern}`);
      return;
    }
    case 'enum': {
      const values = Object.values(shape.members!).map((m) => m.traits!['smithy.api#enumValue']);
      if (!values.includes(value)) errors.push(`${path}: ${String(value)} is not one of ${values.join(', ')}`);
      return;
    }
    case 'list':
      if (!Array.isArray(value)) { errors.push(`${path}: not a list`); return; }
      value.forEach((item, i) => check(item, shape.member!.target, `${path}[${i}]`, errors));
      return;
    case 'map':
      if (!isObject) { errors.push(`${path}: not a map`); return; }
      for (const [k, v] of Object.entries(value)) check(v, shape.value!.target, `${path}.${k}`, errors);
      return;
    case 'union':
    case 'structure': {
      if (!isObject) { errors.push(`${path}: not an object`); return; }
      const members = shape.members!;
      const keys = Object.keys(value).filter((k) => !extra.includes(k));
      for (const key of keys) {
        if (!members[key]) errors.push(`${path}.${key}: not a member of ${target.slice(NS.length)}`);
        else check((value as Record<string, unknown>)[key], members[key].target, `${path}.${key}`, errors);
      }
      if (shape.type === 'union' && keys.length !== 1) errors.push(`${path}: a union sets exactly one member (got ${keys.length})`);
      if (shape.type === 'structure') {
        for (const [name, member] of Object.entries(members)) {
          const inBody = !member.traits?.['smithy.api#httpLabel'] && !member.traits?.['smithy.api#httpPayload'];
          if (inBody && member.traits?.['smithy.api#required'] && !(name in value)) errors.push(`${path}.${name}: required`);
        }
      }
      return;
    }
    default:
      return;
  }
}

function errorsOf(value: unknown, shape: string, extra: readonly string[] = []): string[] {
  const errors: string[] = [];
  check(value, NS + shape, '$', errors, extra);
  return errors;
}

const here = join(projectRoot(), 'test/translate');
const dirs = readdirSync(here).filter((d) => d.endsWith('--bedrock-converse'));

it('the checker refuses what the model refuses', () => {
  expect(errorsOf({ messages: [{ role: 'user', content: [{ text: 'x', cachePoint: { type: 'default' } }] }] }, 'ConverseRequest')).toEqual(['$.messages[0].content[0]: a union sets exactly one member (got 2)']);
  expect(errorsOf({ messages: [{ role: 'system', content: [] }], model: 'x' }, 'ConverseRequest')).toEqual(['$.messages[0].role: system is not one of user, assistant', '$.model: not a member of ConverseRequest']);
  expect(errorsOf({ toolConfig: { tools: [{ toolSpec: { name: 'bad name' } }] } }, 'ConverseRequest')).toEqual(['$.toolConfig.tools[0].toolSpec.name: bad name does not match ^[a-zA-Z0-9_-]+$', '$.toolConfig.tools[0].toolSpec.inputSchema: required']);
});

for (const dir of dirs) {
  describe(`${dir} fixtures against Bedrock's Smithy model`, () => {
    for (const name of readdirSync(join(here, dir)).filter((n) => !n.includes('.'))) {
      const file = (f: string) => join(here, dir, name, f);
      it(name, () => {
        expect(errorsOf(JSON.parse(readFileSync(file('upstream-request.json'), 'utf8')), 'ConverseRequest')).toEqual([]);
        if (existsSync(file('upstream-response.json'))) expect(errorsOf(JSON.parse(readFileSync(file('upstream-response.json'), 'utf8')), 'ConverseResponse')).toEqual([]);
        if (!existsSync(file('upstream-stream.sse'))) return;
        const union = model.shapes[`${NS}ConverseStreamOutput`]!.members!;
        for (const event of new SseParser().push(readFileSync(file('upstream-stream.sse'), 'utf8'))) {
          const member = union[event.event!];
          expect(member, `event ${event.event} is a ConverseStreamOutput member`).toBeDefined();
          expect(errorsOf(JSON.parse(event.data), member!.target.slice(NS.length), [STREAM_PADDING])).toEqual([]);
        }
      });
    }
  });
}
