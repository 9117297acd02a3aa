/**
 * The simulator's structured output (issue 31 item 13): which JSON a request asks for, in each wire
 * format (chat `response_format`, responses `text.format`, messages `output_config.format`), and the
 * deterministic JSON text that satisfies it. A schema is sampled like tool arguments (`sampleValue`);
 * a free-form JSON object (`json_object`, which carries no schema) is built from the prompt. No I/O.
 */
import { isRecord, quote, sampleValue, type Rec } from './text.js';

/** The JSON an answer must be: one that satisfies `schema`, or any JSON object. */
export type JsonFormat = { kind: 'schema'; schema: unknown } | { kind: 'object' };

/** Chat completions' `response_format`: `{type: json_schema, json_schema: {schema}}` or `{type: json_object}`. */
export function chatJsonFormat(responseFormat: unknown): JsonFormat | null {
  if (!isRecord(responseFormat)) return null;
  if (responseFormat.type === 'json_object') return { kind: 'object' };
  if (responseFormat.type !== 'json_schema' || !isRecord(responseFormat.json_schema)) return null;
  return schemaFormat(responseFormat.json_schema.schema);
}

/** Responses' `text.format`: `{type: json_schema, name, schema}` or `{type: json_object}`. */
export function responsesJsonFormat(text: unknown): JsonFormat | null {
  const format = isRecord(text) ? text.format : undefined;
  if (!isRecord(format)) return null;
  if (format.type === 'json_object') return { kind: 'object' };
  return format.type === 'json_schema' ? schemaFormat(format.schema) : null;
}

/** Messages' `output_config.format`: `{type: json_schema, schema}` (the vendor's structured output). */
export function messagesJsonFormat(outputConfig: unknown): JsonFormat | null {
  const format = isRecord(outputConfig) ? outputConfig.format : undefined;
  return isRecord(format) && format.type === 'json_schema' ? schemaFormat(format.schema) : null;
}

/** A schema that names no properties and does not close the object is free-form: any JSON object. */
function schemaFormat(schema: unknown): JsonFormat {
  return isOpenObject(schema) ? { kind: 'object' } : { kind: 'schema', schema };
}

/** True for an object schema with no `properties` (and no `additionalProperties: false`): any object fits. */
export function isOpenObject(schema: unknown): boolean {
  if (!isRecord(schema)) return true;
  const props = isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  return (schema.type === undefined || schema.type === 'object') && props.length === 0 && schema.additionalProperties !== false
    && schema.anyOf === undefined && schema.oneOf === undefined && schema.allOf === undefined && schema.$ref === undefined;
}

/** The JSON text of the answer to `format`, for a request whose last user text is `userText`. */
export function jsonAnswer(format: JsonFormat, userText: string): string {
  return JSON.stringify(format.kind === 'schema' ? sampleValue(format.schema) : promptObject(userText));
}

/** Names that read as a quantity: their value is a number (as a model would answer). */
const QUANTITY = /(celsius|fahrenheit|kelvin|temperature|temp|degrees|count|total|number|amount|price|cost|age|year|score|rating|percent|quantity|size|length|width|height|weight|latitude|longitude|lat|lon|lng)s?$/i;
/** Names that read as a yes/no question: their value is a boolean. */
const FLAG = /^(is|has|can|should)(_|[A-Z])/;

/**
 * The free-form object of a JSON-mode answer: the keys the prompt names (`... with keys city and
 * celsius`, `keys: a, b, c`), each valued by its name (a quantity is 1, a flag true, anything else the
 * string "sim"); a prompt that names none gets `{"reply": <the natural reply>}`.
 */
export function promptObject(userText: string): Rec {
  const named = /\bkeys?\b[:\s]+([^.?!\n]+)/i.exec(userText)?.[1] ?? '';
  const keys = named.split(/,|\band\b|\bor\b/i)
    .map((k) => k.trim().replace(/^["'`]|["'`]$/g, ''))
    .filter((k) => /^[A-Za-z_][\w-]*$/.test(k));
  if (keys.length === 0) return { reply: `This is a simulated reply to: ${quote(userText.trim())}` };
  return Object.fromEntries(keys.map((k) => [k, QUANTITY.test(k) ? 1 : FLAG.test(k) ? true : 'sim']));
}
