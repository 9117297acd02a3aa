/**
 * The Gemini generateContent request for a chat-completions request. Every client parameter is
 * carried, accepted because its value changes nothing (e.g. `n: 1`), or refused with
 * `unsupported_parameter`: nothing is silently dropped or clamped. The model and streaming are in the
 * URL (the operation's path and stream_path), never in the body. Messages: contents.ts.
 */
import type { CompiledOffering } from '../../config/types.js';
import { requireStructuredOutput } from '../anthropic-output-format.js';
import { invalid, unsupported } from '../refusals.js';
import { functionCallingConfig, functionTools, jsonOutput, type FunctionSpec } from '../gemini-request.js';
import { toGeminiContents } from './contents.js';

type Body = Record<string, unknown>;

/** Parameters this file carries upstream (or consumes: `model` and `stream` are the URL, `stream_options` the translator's). */
const CARRIED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p',
  'stop', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'presence_penalty', 'frequency_penalty',
  'reasoning_effort',
]);

/**
 * `reasoning_effort` as a thinking budget, Google's own mapping on its OpenAI-compatible endpoint
 * (https://ai.google.dev/gemini-api/docs/openai: low 1,024, medium 8,192, high 24,576 tokens; none
 * turns thinking off, which models that always think refuse with a 400).
 */
const THINKING_BUDGETS: Record<string, number> = { none: 0, minimal: 0, low: 1024, medium: 8192, high: 24576 };

const isRecord = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmptyObject = (v: unknown): boolean => isRecord(v) && Object.keys(v).length === 0;

/** Parameters with no upstream equivalent, accepted only at the value that asks for nothing. */
const NEUTRAL: Record<string, { ok: (value: unknown) => boolean; why: string }> = {
  n: { ok: (v) => v === 1, why: 'this model returns exactly one choice here; "n" must be 1' },
  logprobs: { ok: (v) => v === false, why: 'log probabilities are not available for this model on this endpoint' },
  top_logprobs: { ok: (v) => v === 0, why: 'log probabilities are not available for this model on this endpoint' },
  logit_bias: { ok: isEmptyObject, why: 'this model does not accept token biases' },
  modalities: { ok: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text', why: 'this model only produces text here ("modalities" must be ["text"])' },
  store: { ok: (v) => v === false, why: 'completions are not stored' },
  metadata: { ok: isEmptyObject, why: 'completions are not stored, so they carry no metadata' },
};

const HINTS: Record<string, string> = {
  audio: 'this model does not produce audio here',
  functions: 'use "tools" instead of the deprecated "functions"',
  function_call: 'use "tool_choice" instead of the deprecated "function_call"',
  web_search_options: 'web search is not available for this model on this endpoint',
  user: 'this model takes no end-user identifier',
  safety_identifier: 'this model takes no end-user identifier',
};

/**
 * Refuses every top-level parameter that cannot be represented upstream (null counts as absent), and a
 * `response_format` asking for JSON where `offering` takes no structured output.
 */
export function checkParams(body: Body, offering: CompiledOffering | undefined): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === null || value === undefined || CARRIED.has(name)) continue;
    const neutral = NEUTRAL[name];
    if (neutral?.ok(value)) continue;
    throw unsupported(name, neutral?.why ?? HINTS[name]);
  }
  if (body.parallel_tool_calls === false) throw unsupported('parallel_tool_calls', 'this model cannot be limited to one tool call per answer');
  const effort = body.reasoning_effort;
  if (effort !== undefined && effort !== null && (typeof effort !== 'string' || !Object.hasOwn(THINKING_BUDGETS, effort))) {
    throw unsupported('reasoning_effort', `this model takes ${Object.keys(THINKING_BUDGETS).join(', ')}`);
  }
  responseFormatConfig(body, offering);
}

/** The generationConfig members `response_format` asks for (none for text). */
function responseFormatConfig(body: Body, offering: CompiledOffering | undefined): Body {
  const format = body.response_format;
  if (format === undefined || format === null || (isRecord(format) && format.type === 'text')) return {};
  if (!isRecord(format) || (format.type !== 'json_schema' && format.type !== 'json_object')) throw unsupported('response_format', '"type" must be text, json_schema or json_object');
  requireStructuredOutput(offering, 'response_format');
  if (format.type === 'json_object') return jsonOutput(undefined);
  const spec = format.json_schema;
  if (!isRecord(spec) || !isRecord(spec.schema)) throw unsupported('response_format', '"json_schema.schema" must be a JSON Schema object');
  return jsonOutput(spec.schema);
}

function stopSequences(stop: unknown): string[] | null {
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop)) return stop.filter((s): s is string => typeof s === 'string');
  return null;
}

/** The generationConfig of `body` (sampling, output cap, stops, JSON output). */
function generationConfig(body: Body, offering: CompiledOffering): Body {
  const config: Body = {};
  // max_completion_tokens first: the route's default fills max_tokens even when the client sent the newer name.
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') config.maxOutputTokens = max;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop && stop.length > 0) config.stopSequences = stop;
  if (typeof body.seed === 'number') config.seed = body.seed;
  // The vendor's penalties have OpenAI's meaning and range (-2 to 2); 0, the default, asks for nothing.
  if (typeof body.presence_penalty === 'number' && body.presence_penalty !== 0) config.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number' && body.frequency_penalty !== 0) config.frequencyPenalty = body.frequency_penalty;
  if (typeof body.reasoning_effort === 'string') config.thinkingConfig = { thinkingBudget: THINKING_BUDGETS[body.reasoning_effort] };
  return { ...config, ...responseFormatConfig(body, offering) };
}

/** The functions of chat-completions `tools`, or null when there are none. */
function functionsOf(tools: unknown): FunctionSpec[] | null {
  if (tools === null || tools === undefined) return null;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  if (tools.length === 0) return null;
  return tools.map((tool: unknown, i) => {
    const param = `tools[${i}]`;
    const t = (tool ?? {}) as { type?: unknown; function?: Body };
    if (t.type !== 'function') throw unsupported(`${param}.type`, 'only function tools can be sent to this model');
    const fn = t.function;
    if (!fn || typeof fn.name !== 'string') throw invalid(`${param}.function.name`, `${param}.function.name is required.`);
    for (const key of Object.keys(fn)) if (fn[key] !== null && !['name', 'description', 'parameters', 'strict'].includes(key)) throw unsupported(`${param}.function.${key}`);
    // The vendor always keeps to the declared schema: `strict` asks for nothing more.
    const spec: FunctionSpec = { name: fn.name };
    if (typeof fn.description === 'string') spec.description = fn.description;
    if (fn.parameters !== undefined) spec.schema = fn.parameters;
    return spec;
  });
}

/** The toolConfig of `tool_choice`, or null when the default (AUTO) applies. */
function toolConfigOf(choice: unknown, hasTools: boolean): Body | null {
  if (choice === null || choice === undefined || choice === 'auto') return null;
  let config: Body;
  if (choice === 'none') config = functionCallingConfig('NONE');
  else if (choice === 'required') config = functionCallingConfig('ANY');
  else if (isRecord(choice) && choice.type === 'function') {
    const name = (choice.function as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string') throw invalid('tool_choice.function.name', 'tool_choice.function.name is required.');
    config = functionCallingConfig('ANY', [name]);
  } else throw unsupported('tool_choice', 'only "none", "auto", "required" and a named function can be sent to this model');
  if (!hasTools) {
    if (choice === 'none') return null;
    throw invalid('tool_choice', 'tool_choice requires tools.');
  }
  return config;
}

/** The generateContent body for `body`, sent to the offering's upstream model. */
export function toGeminiRequest(body: Body, offering: CompiledOffering): Body {
  checkParams(body, offering);
  const { systemInstruction, contents } = toGeminiContents(body.messages);
  const out: Body = { contents };
  if (systemInstruction) out.systemInstruction = systemInstruction;
  const functions = functionsOf(body.tools);
  if (functions) out.tools = functionTools(functions);
  const toolConfig = toolConfigOf(body.tool_choice, functions !== null);
  if (toolConfig) out.toolConfig = toolConfig;
  const config = generationConfig(body, offering);
  if (Object.keys(config).length > 0) out.generationConfig = config;
  return out;
}
