/**
 * The Gemini generateContent request for a messages-format request. Every client parameter is
 * carried or refused with `unsupported_parameter` (the route declares the hints it drops): nothing is
 * silently dropped or clamped. The model and streaming are in the URL, never in the body. Content:
 * contents.ts.
 */
import type { CompiledOffering } from '../../config/types.js';
import { requireStructuredOutput } from '../anthropic-output-format.js';
import { invalid, unsupported } from '../refusals.js';
import { functionCallingConfig, functionTools, jsonOutput, type FunctionSpec } from '../gemini-request.js';
import { toGeminiContents } from './contents.js';

type Body = Record<string, unknown>;

const CARRIED = new Set(['model', 'messages', 'system', 'max_tokens', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'tools', 'tool_choice', 'thinking', 'output_config']);

const HINTS: Record<string, string> = {
  metadata: 'this model takes no end-user identifier',
  container: 'skills and code execution are not available for this model',
  mcp_servers: 'MCP servers are not available for this model',
  context_management: 'context management is not available for this model',
};

const isRecord = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Refuses every top-level parameter (and value) that cannot be represented upstream; null counts as absent. */
export function checkParams(body: Body, offering: CompiledOffering | undefined): void {
  for (const [name, value] of Object.entries(body)) {
    if (value !== null && value !== undefined && !CARRIED.has(name)) throw unsupported(name, HINTS[name]);
  }
  outputConfig(body.output_config, offering);
  thinkingConfig(body.thinking);
}

/** generationConfig members of `output_config` (JSON output fitting its schema). */
function outputConfig(config: unknown, offering: CompiledOffering | undefined): Body {
  if (config === undefined || config === null) return {};
  if (!isRecord(config)) throw invalid('output_config', 'output_config must be an object.');
  for (const key of Object.keys(config)) if (key !== 'format' && config[key] !== null) throw unsupported(`output_config.${key}`);
  const format = config.format;
  if (format === undefined || format === null) return {};
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.schema)) throw unsupported('output_config.format', 'only {type: json_schema, schema} can be sent to this model');
  requireStructuredOutput(offering, 'output_config.format');
  return jsonOutput(format.schema);
}

/** The thinkingConfig of `thinking`: enabled is a thinking budget, disabled a budget of 0; null when absent. */
function thinkingConfig(thinking: unknown): Body | null {
  if (thinking === undefined || thinking === null) return null;
  if (!isRecord(thinking)) throw invalid('thinking', 'thinking must be an object.');
  if (thinking.type === 'disabled') return { thinkingBudget: 0 };
  if (thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number') return { thinkingBudget: thinking.budget_tokens };
  throw unsupported('thinking', 'only {type: enabled, budget_tokens} and {type: disabled} can be sent to this model');
}

/** The functions of messages `tools` (custom tools only), or null when there are none. */
function functionsOf(tools: unknown): FunctionSpec[] | null {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  if (tools.length === 0) return null;
  return tools.map((raw: unknown, i) => {
    const param = `tools[${i}]`;
    const tool = (raw ?? {}) as Body;
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') throw unsupported(`${param}.type`, `the server tool "${String(tool.type)}" is not available for this model`);
    if (typeof tool.name !== 'string') throw invalid(`${param}.name`, `${param}.name is required.`);
    for (const key of Object.keys(tool)) {
      if (tool[key] !== null && !['type', 'name', 'description', 'input_schema', 'cache_control'].includes(key)) throw unsupported(`${param}.${key}`);
    }
    const spec: FunctionSpec = { name: tool.name };
    if (typeof tool.description === 'string') spec.description = tool.description;
    if (tool.input_schema !== undefined) spec.schema = tool.input_schema;
    return spec;
  });
}

/** The toolConfig of `tool_choice`, or null when the default (auto) applies. */
function toolConfigOf(choice: unknown, hasTools: boolean): Body | null {
  if (choice === undefined || choice === null) return null;
  if (!isRecord(choice)) throw invalid('tool_choice', 'tool_choice must be an object.');
  if (choice.disable_parallel_tool_use === true) throw unsupported('tool_choice.disable_parallel_tool_use', 'this model cannot be limited to one tool call per answer');
  let config: Body | null;
  if (choice.type === 'auto') config = null;
  else if (choice.type === 'none') config = functionCallingConfig('NONE');
  else if (choice.type === 'any') config = functionCallingConfig('ANY');
  else if (choice.type === 'tool' && typeof choice.name === 'string') config = functionCallingConfig('ANY', [choice.name]);
  else throw invalid('tool_choice', 'tool_choice.type must be auto, any, tool (with a name) or none.');
  if (!hasTools) {
    if (choice.type === 'any' || choice.type === 'tool') throw invalid('tool_choice', 'tool_choice requires tools.');
    return null;
  }
  return config;
}

/** The generateContent body for `body`, sent to the offering's upstream model. */
export function toGeminiRequest(body: Body, offering: CompiledOffering): Body {
  checkParams(body, offering);
  const { systemInstruction, contents } = toGeminiContents(body.system, body.messages);
  const out: Body = { contents };
  if (systemInstruction) out.systemInstruction = systemInstruction;
  const functions = functionsOf(body.tools);
  if (functions) out.tools = functionTools(functions);
  const toolConfig = toolConfigOf(body.tool_choice, functions !== null);
  if (toolConfig) out.toolConfig = toolConfig;
  const config: Body = {};
  if (typeof body.max_tokens === 'number') config.maxOutputTokens = body.max_tokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.top_k === 'number') config.topK = body.top_k;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) config.stopSequences = body.stop_sequences;
  const thinking = thinkingConfig(body.thinking);
  if (thinking) config.thinkingConfig = thinking;
  Object.assign(config, outputConfig(body.output_config, offering));
  if (Object.keys(config).length > 0) out.generationConfig = config;
  return out;
}
