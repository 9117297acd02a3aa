/**
 * The upstream Messages request for a chat-completions request. Every client parameter is either
 * carried, accepted because its value changes nothing (e.g. `n: 1`), or refused with
 * `unsupported_parameter`: nothing is silently dropped or clamped. Messages and tools: messages.ts.
 */
import type { CompiledOffering } from '../../config/types.js';
import { invalid, unsupported } from '../refusals.js';
import { toAnthropicMessages, toAnthropicToolChoice, toAnthropicTools } from './messages.js';
import { responseFormatPlan, type ResponseFormatPlan } from './response-format.js';

type Body = Record<string, unknown>;

/** Parameters this file carries upstream (or consumes, like `stream_options`). */
const CARRIED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p',
  'stop', 'user', 'safety_identifier', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format',
]);

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** Parameters with no upstream equivalent, accepted only at the value that asks for nothing. */
const NEUTRAL: Record<string, { ok: (value: unknown) => boolean; why: string }> = {
  n: { ok: (v) => v === 1, why: 'this model returns exactly one choice; "n" must be 1' },
  logprobs: { ok: (v) => v === false, why: 'this model does not return log probabilities' },
  top_logprobs: { ok: (v) => v === 0, why: 'this model does not return log probabilities' },
  presence_penalty: { ok: (v) => v === 0, why: 'this model has no presence penalty' },
  frequency_penalty: { ok: (v) => v === 0, why: 'this model has no frequency penalty' },
  logit_bias: { ok: isEmptyObject, why: 'this model does not accept token biases' },
  modalities: { ok: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text', why: 'this model only produces text ("modalities" must be ["text"])' },
  store: { ok: (v) => v === false, why: 'completions are not stored' },
  metadata: { ok: isEmptyObject, why: 'completions are not stored, so they carry no metadata' },
};

/** Why a known parameter with no equivalent is refused, when a hint helps. */
const HINTS: Record<string, string> = {
  seed: 'this model has no deterministic sampling seed',
  audio: 'this model does not produce audio',
  functions: 'use "tools" instead of the deprecated "functions"',
  function_call: 'use "tool_choice" instead of the deprecated "function_call"',
  reasoning_effort: 'reasoning controls are not available for this model on this endpoint',
  web_search_options: 'web search is not available for this model on this endpoint',
};

/**
 * Refuses every top-level parameter that cannot be represented upstream (null counts as absent), and
 * returns what `response_format` asks (structured output only where `offering` takes it: response-format.ts).
 */
export function checkParams(body: Body, offering: CompiledOffering | undefined): ResponseFormatPlan {
  for (const [name, value] of Object.entries(body)) {
    if (value === null || value === undefined || CARRIED.has(name)) continue;
    const neutral = NEUTRAL[name];
    if (neutral?.ok(value)) continue;
    throw unsupported(name, neutral?.why ?? HINTS[name]);
  }
  const temperature = body.temperature;
  if (typeof temperature === 'number' && temperature > 1) {
    throw unsupported('temperature', `this model accepts a temperature from 0 to 1, and ${temperature} was sent`);
  }
  const user = body.user;
  const safety = body.safety_identifier;
  if (typeof user === 'string' && typeof safety === 'string' && user !== safety) {
    throw unsupported('user', 'this model takes one end-user identifier; send "safety_identifier" alone');
  }
  return responseFormatPlan(body, offering);
}

function maxTokens(body: Body): number {
  // max_completion_tokens first: the route's default fills max_tokens even when the client sent the newer name.
  const value = body.max_completion_tokens ?? body.max_tokens;
  if (typeof value !== 'number') throw invalid('max_tokens', "The parameter 'max_tokens' (or 'max_completion_tokens') is required for this model.");
  return value;
}

function stopSequences(stop: unknown): string[] | null {
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop)) return stop.filter((s): s is string => typeof s === 'string');
  return null;
}

/** The Messages request body for `body`, sent to the offering's upstream model. */
export function toAnthropicRequest(body: Body, offering: CompiledOffering): Body {
  const format = checkParams(body, offering);
  const upstreamModel = offering.upstreamModel;
  const { system, messages } = toAnthropicMessages(body.messages);
  const out: Body = { model: upstreamModel, max_tokens: maxTokens(body), messages };
  if (system !== null) out.system = system;
  if (typeof body.stream === 'boolean') out.stream = body.stream;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  // top_p 1 (no nucleus cut) is the upstream's own behaviour; sent, it would clash with `temperature`
  // on models that refuse both, so it is not sent.
  if (typeof body.top_p === 'number' && body.top_p !== 1) out.top_p = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop && stop.length > 0) out.stop_sequences = stop;
  const userId = body.safety_identifier ?? body.user;
  if (typeof userId === 'string') out.metadata = { user_id: userId };
  const tools = toAnthropicTools(body.tools);
  if (tools) out.tools = tools;
  const toolChoice = toAnthropicToolChoice(body.tool_choice, body.parallel_tool_calls, tools !== null);
  if (toolChoice) out.tool_choice = toolChoice;
  if (format.mode === 'schema') out.output_config = format.outputConfig;
  if (format.mode === 'object') {
    out.tools = [format.tool];
    out.tool_choice = format.toolChoice;
  }
  return out;
}
