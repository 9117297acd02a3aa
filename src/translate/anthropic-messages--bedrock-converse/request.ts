/**
 * The Converse request body (Bedrock's ConverseRequest / ConverseStreamRequest, docs/vendors/
 * bedrock-converse.md) for a Messages request. The model is not in the body: it is the path's
 * `{model}` (Bedrock's `modelId` label, filled with the served upstream model), and streaming is
 * another operation (ConverseStream), so `stream` is consumed here. Every other parameter is carried
 * or refused: nothing is silently dropped.
 */
import { invalid, unsupported } from '../refusals.js';
import { converseContent, converseSystem, CACHE_POINT, onlyKeys, type Json } from './content.js';

/** Parameters carried upstream (or consumed: `model`, `stream`). */
const CARRIED = new Set(['model', 'max_tokens', 'messages', 'system', 'stream', 'temperature', 'top_p', 'stop_sequences', 'metadata', 'tools', 'tool_choice']);

/** Why a Messages parameter with no Converse equivalent is refused. */
const HINTS: Record<string, string> = {
  top_k: 'Bedrock Converse has no top_k inference parameter',
  thinking: 'extended thinking is not available for this model on this endpoint',
  service_tier: 'Bedrock has no service tiers under this name',
  container: 'skills and containers run on the messages vendor only',
  mcp_servers: 'MCP servers are not available on Bedrock',
  output_config: 'structured outputs are not available for this model',
};

/** Refuses every top-level parameter Converse cannot carry (null counts as absent). */
export function checkParams(body: Json): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === null || value === undefined || CARRIED.has(name)) continue;
    throw unsupported(name, HINTS[name] ?? 'Bedrock Converse has no equivalent');
  }
}

/** Messages roles alternate on Bedrock: consecutive messages of one role are joined into one. */
function converseMessages(input: unknown): Json[] {
  if (!Array.isArray(input)) throw invalid('messages', 'messages must be an array.');
  const out: Array<{ role: string; content: Json[] }> = [];
  input.forEach((raw: unknown, i) => {
    const param = `messages[${i}]`;
    if (!raw || typeof raw !== 'object') throw invalid(param, `${param} must be a message object.`);
    const message = raw as Json;
    onlyKeys(message, ['role', 'content'], param);
    if (message.role !== 'user' && message.role !== 'assistant') throw invalid(`${param}.role`, `${param}.role must be user or assistant.`);
    const content = converseContent(message.content, `${param}.content`);
    const last = out[out.length - 1];
    if (last && last.role === message.role) last.content.push(...content);
    else out.push({ role: message.role, content });
  });
  return out;
}

/** Messages tools (custom tools only) as Converse `tools`, or null. */
function converseTools(tools: unknown): Json[] | null {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  if (tools.length === 0) return null;
  return tools.flatMap((tool: unknown, i) => {
    const param = `tools[${i}]`;
    const t = (tool ?? {}) as Json;
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') throw unsupported(`${param}.type`, 'only custom (function) tools can be sent to a Bedrock model');
    onlyKeys(t, ['type', 'name', 'description', 'input_schema', 'strict', 'cache_control'], param);
    if (typeof t.name !== 'string') throw invalid(`${param}.name`, `${param}.name is required.`);
    const spec: Json = { name: t.name };
    if (typeof t.description === 'string') spec.description = t.description;
    spec.inputSchema = { json: t.input_schema ?? { type: 'object', properties: {} } };
    if (typeof t.strict === 'boolean') spec.strict = t.strict;
    return t.cache_control ? [{ toolSpec: spec }, CACHE_POINT] : [{ toolSpec: spec }];
  });
}

/** Messages `tool_choice` as Converse's ToolChoice union (auto, any, tool), or null for none given. */
function converseToolChoice(choice: unknown): Json | null {
  if (choice === undefined || choice === null) return null;
  const c = choice as { type?: unknown; name?: unknown; disable_parallel_tool_use?: unknown };
  if (c.disable_parallel_tool_use === true) throw unsupported('tool_choice.disable_parallel_tool_use', 'Bedrock Converse cannot forbid parallel tool calls (disable_parallel_tool_use, or parallel_tool_calls: false)');
  if (c.type === 'auto') return { auto: {} };
  if (c.type === 'any') return { any: {} };
  if (c.type === 'tool' && typeof c.name === 'string') return { tool: { name: c.name } };
  if (c.type === 'none') throw unsupported('tool_choice', 'Bedrock Converse has no "none" tool choice; send no tools instead');
  throw invalid('tool_choice', 'tool_choice must be auto, any or a named tool.');
}

/** The Converse body for a Messages request (checked again: the translator's factory checked it first). */
export function toConverseRequest(body: Json): Json {
  checkParams(body);
  const out: Json = { messages: converseMessages(body.messages) };
  const system = converseSystem(body.system);
  if (system) out.system = system;
  const inference: Json = {};
  if (typeof body.max_tokens === 'number') inference.maxTokens = body.max_tokens;
  if (typeof body.temperature === 'number') inference.temperature = body.temperature;
  if (typeof body.top_p === 'number') inference.topP = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) inference.stopSequences = body.stop_sequences;
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  const tools = converseTools(body.tools);
  const choice = converseToolChoice(body.tool_choice);
  if (choice && !tools) throw invalid('tool_choice', 'tool_choice requires tools.');
  if (tools) out.toolConfig = choice ? { tools, toolChoice: choice } : { tools };
  // Bedrock's request metadata (key-value pairs its invocation logs can be filtered by) carries the end user.
  const userId = (body.metadata as { user_id?: unknown } | undefined)?.user_id;
  if (body.metadata !== undefined && body.metadata !== null) onlyKeys(body.metadata as Json, ['user_id'], 'metadata');
  if (typeof userId === 'string') out.requestMetadata = { user_id: userId };
  return out;
}
