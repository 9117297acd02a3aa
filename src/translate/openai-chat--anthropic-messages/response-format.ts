/**
 * Chat completions' `response_format` on a messages-format model (issue 31 item 1), where the offering
 * takes structured output (`structured_output: true`):
 * - `{type: text}` asks for nothing;
 * - `{type: json_schema, json_schema: {name, schema, description?, strict?}}` becomes the vendor's
 *   `output_config.format: {type: json_schema, schema}` (constrained decoding: the answer fits the
 *   schema whatever `strict` says); the vendor has no format name, and a `description` is carried as
 *   the schema's own when it has none (joined to it otherwise). A schema the vendor would refuse is a
 *   400 (anthropic-output-format.ts);
 * - `{type: json_object}` (any JSON object) has no output_config equivalent: the vendor requires
 *   `additionalProperties: false` on every object of a format schema, so an open object schema is
 *   refused. It is answered the way the vendor's tool-use guide gets JSON instead: one tool whose
 *   input is any object (`{type: object}`), forced with `tool_choice`; the tool's input is the
 *   answer's content (JSON text) and its `tool_use` stop a normal `stop`. That tool is the request's
 *   only one, so json_object with `tools` is a 400.
 */
import type { CompiledOffering } from '../../config/types.js';
import { checkOutputSchema, requireStructuredOutput } from '../anthropic-output-format.js';
import { unsupported } from '../refusals.js';

type Body = Record<string, unknown>;

/** The forced tool that answers json_object; its input is the client's content. */
export const JSON_OBJECT_TOOL = 'json_object';

/** What `response_format` asks of the upstream request. */
export type ResponseFormatPlan =
  | { mode: 'text' }
  | { mode: 'schema'; outputConfig: Body }
  | { mode: 'object'; tool: Body; toolChoice: Body };

const isRecord = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The plan for `body.response_format` (absent or null: text); throws the client's 400 for a format
 * this offering cannot take (`offering` undefined: none), a schema the vendor would refuse, or
 * json_object with tools.
 */
export function responseFormatPlan(body: Body, offering: CompiledOffering | undefined): ResponseFormatPlan {
  const format = body.response_format;
  if (format === undefined || format === null || (isRecord(format) && format.type === 'text')) return { mode: 'text' };
  if (!isRecord(format) || (format.type !== 'json_schema' && format.type !== 'json_object')) {
    throw unsupported('response_format', '"type" must be text, json_schema or json_object');
  }
  requireStructuredOutput(offering, 'response_format');
  if (format.type === 'json_object') {
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      throw unsupported('response_format', 'json_object cannot be combined with "tools" on this model (use json_schema, which can)');
    }
    const tool = { name: JSON_OBJECT_TOOL, description: 'Answer with a JSON object.', input_schema: { type: 'object' } };
    return { mode: 'object', tool, toolChoice: { type: 'tool', name: JSON_OBJECT_TOOL } };
  }
  const spec = format.json_schema;
  if (!isRecord(spec) || !isRecord(spec.schema)) throw unsupported('response_format', '"json_schema.schema" must be a JSON Schema object');
  checkOutputSchema(spec.schema, 'response_format');
  return { mode: 'schema', outputConfig: { format: { type: 'json_schema', schema: withDescription(spec.schema, spec.description) } } };
}

/** The schema with the format's description as its own (joined when it has one). */
function withDescription(schema: Body, description: unknown): Body {
  if (typeof description !== 'string' || description === '') return schema;
  const own = typeof schema.description === 'string' && schema.description !== '' ? `${description}\n\n${schema.description}` : description;
  return { ...schema, description: own };
}
