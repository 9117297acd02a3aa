/**
 * The Responses request -> a chat completions request. Every top-level parameter is listed here with
 * what happens to it: mapped, copied, echoed only (it changes nothing upstream), or refused. An
 * unknown parameter is refused: nothing is silently dropped (DESIGN.md, "Contracts worth keeping").
 */
import { GatewayError } from '../../errors.js';
import { isObject, isSet, refuseOtherKeys, unsupported, type Json } from './common.js';
import { translateInput } from './input.js';
import { translateToolChoice, translateTools } from './tools.js';

/** Copied as is: chat completions has the same parameter with the same meaning. */
const COPIED = ['temperature', 'top_p', 'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'] as const;

/**
 * Accepted without an upstream counterpart, because they ask for nothing the gateway fails to do:
 * `metadata` is echoed on the Response (chat keeps metadata only for stored completions);
 * `max_tool_calls` caps built-in tool calls, which this translation refuses anyway;
 * `stream_options.include_obfuscation` asks for padding fields the gateway does not add;
 * `store` and `previous_response_id` are the gateway's own (issue 31 item 3): the response store keeps
 * the answer, and has already put the previous turns into `input` (src/pipeline/response-store.ts).
 */
const ECHOED = ['metadata', 'max_tool_calls', 'stream_options', 'store', 'previous_response_id'] as const;

/** Handled below, one by one. */
const MAPPED = ['model', 'input', 'instructions', 'max_output_tokens', 'stream', 'tools', 'tool_choice', 'parallel_tool_calls', 'text'] as const;

/** Accepted only at the value meaning "off" (what the gateway does); any other value is refused. */
const ONLY_OFF: Readonly<Record<string, unknown>> = { background: false, truncation: 'disabled' };

const REASONS: Readonly<Record<string, string>> = {
  background: 'Background responses are not supported for this model.',
  truncation: "truncation: 'auto' is not supported for this model.",
  conversation: 'Conversations are not supported for this model; chain responses with previous_response_id or send the conversation in input.',
  prompt: 'Prompt templates are not supported for this model.',
  reasoning: 'This model takes no reasoning controls.',
  include: 'This model cannot include additional output data.',
  top_logprobs: 'Log probabilities are not supported for this model.',
};

/** Chat `response_format` and `verbosity` for the Responses `text` configuration. */
function textConfig(textParam: unknown, out: Json): void {
  if (!isSet(textParam)) return;
  if (!isObject(textParam)) return unsupported('text', "'text' must be an object.");
  refuseOtherKeys(textParam, ['format', 'verbosity'], 'text');
  if (isSet(textParam.verbosity)) out.verbosity = textParam.verbosity;
  const format = textParam.format;
  if (!isSet(format)) return;
  if (!isObject(format)) return unsupported('text.format', "'text.format' must be an object.");
  if (format.type === 'text') {
    refuseOtherKeys(format, ['type'], 'text.format');
  } else if (format.type === 'json_object') {
    refuseOtherKeys(format, ['type'], 'text.format');
    out.response_format = { type: 'json_object' };
  } else if (format.type === 'json_schema') {
    refuseOtherKeys(format, ['type', 'name', 'schema', 'description', 'strict'], 'text.format');
    const schema: Json = { name: format.name };
    if (isSet(format.description)) schema.description = format.description;
    schema.schema = format.schema;
    if (isSet(format.strict)) schema.strict = format.strict;
    out.response_format = { type: 'json_schema', json_schema: schema };
  } else {
    unsupported('text.format', `The text format ${JSON.stringify(format.type)} is not supported.`);
  }
}

/** True when `reasoning` asks for something (an object of nulls asks for nothing). */
function asksReasoning(value: unknown): boolean {
  return isObject(value) ? Object.values(value).some(isSet) : isSet(value);
}

/** Refuses the parameters chat completions cannot represent. */
function refuseUnsupported(body: Json): void {
  const known = new Set<string>([...COPIED, ...ECHOED, ...MAPPED, ...Object.keys(ONLY_OFF), ...Object.keys(REASONS)]);
  for (const [key, value] of Object.entries(body)) {
    if (!isSet(value)) continue;
    if (!known.has(key)) unsupported(key, `'${key}' is not supported for this model (it is served through chat completions).`);
    if (key in ONLY_OFF) {
      if (value !== ONLY_OFF[key]) unsupported(key, REASONS[key]!);
      continue;
    }
    if (key === 'reasoning' && !asksReasoning(value)) continue;
    if (key === 'include' && Array.isArray(value) && value.length === 0) continue;
    if (key in REASONS) unsupported(key, REASONS[key]!);
  }
}

/** The chat completions body for a Responses request (the caller sets `model`). */
export function buildChatRequest(body: Json): Json {
  refuseUnsupported(body);
  if (isObject(body.stream_options)) refuseOtherKeys(body.stream_options, ['include_obfuscation'], 'stream_options');
  const messages: Json[] = [];
  if (isSet(body.instructions)) {
    if (typeof body.instructions !== 'string') unsupported('instructions', "'instructions' must be a string.");
    messages.push({ role: 'system', content: body.instructions });
  }
  messages.push(...translateInput(body.input));
  if (messages.length === 0) throw new GatewayError('invalid_request', "The request needs 'input' or 'instructions'.", { param: 'input' });

  const out: Json = { model: '', messages };
  const tools = translateTools(body.tools);
  const toolChoice = translateToolChoice(body.tool_choice);
  if (tools) {
    out.tools = tools;
    // Chat completions accepts these only alongside tools; without tools they change nothing.
    if (toolChoice !== undefined) out.tool_choice = toolChoice;
    if (isSet(body.parallel_tool_calls)) out.parallel_tool_calls = body.parallel_tool_calls;
  } else if (toolChoice !== undefined && toolChoice !== 'auto' && toolChoice !== 'none') {
    out.tool_choice = toolChoice; // forcing a tool that is not there: the upstream answers the error
  }
  for (const key of COPIED) if (isSet(body[key])) out[key] = body[key];
  if (isSet(body.max_output_tokens)) out.max_completion_tokens = body.max_output_tokens;
  textConfig(body.text, out);
  if (body.stream === true) {
    out.stream = true;
    // Spec 4.1 rule 1: streams are metered like JSON answers, so the upstream always reports usage.
    out.stream_options = { include_usage: true };
  }
  return out;
}
