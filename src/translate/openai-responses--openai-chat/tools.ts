/**
 * Responses `tools` and `tool_choice` -> chat completions. Function and custom tools translate;
 * built-in tools are refused (spec 4.2 rule 2, 4.3 rules 3 and 4).
 */
import { GatewayError } from '../../errors.js';
import { isObject, isSet, refuseBuiltins, refuseOtherKeys, unsupported, type Json } from './common.js';

/** Keys a tool may carry with their default value (anything else set is refused). */
const TOOL_DEFAULTS = { defer_loading: false, allowed_callers: ['direct'] };

function typeOf(value: unknown): string {
  return isObject(value) && typeof value.type === 'string' ? value.type : '';
}

/** A Responses custom-tool input format -> the chat custom-tool format. */
function customFormat(format: unknown, param: string): Json {
  if (!isObject(format)) unsupported(param, `'${param}' must be an object.`);
  if (format.type === 'text') return { type: 'text' };
  if (format.type === 'grammar') {
    refuseOtherKeys(format, ['type', 'syntax', 'definition'], param);
    return { type: 'grammar', grammar: { definition: format.definition, syntax: format.syntax } };
  }
  return unsupported(param, `The custom tool format '${String(format.type)}' is not supported.`);
}

/** One function or custom tool in chat form. */
function chatTool(tool: Json, param: string): Json {
  if (tool.type === 'function') {
    refuseOtherKeys(tool, ['type', 'name', 'description', 'parameters', 'strict'], param, TOOL_DEFAULTS);
    const fn: Json = { name: tool.name };
    if (isSet(tool.description)) fn.description = tool.description;
    if (isSet(tool.parameters)) fn.parameters = tool.parameters;
    if (isSet(tool.strict)) fn.strict = tool.strict;
    return { type: 'function', function: fn };
  }
  refuseOtherKeys(tool, ['type', 'name', 'description', 'format'], param, TOOL_DEFAULTS);
  const custom: Json = { name: tool.name };
  if (isSet(tool.description)) custom.description = tool.description;
  if (isSet(tool.format)) custom.format = customFormat(tool.format, `${param}.format`);
  return { type: 'custom', custom };
}

/** The chat `tools` array, or undefined when the request has none. */
export function translateTools(tools: unknown): Json[] | undefined {
  if (!isSet(tools)) return undefined;
  if (!Array.isArray(tools)) return unsupported('tools', "'tools' must be an array.");
  refuseBuiltins(tools.map(typeOf), 'tools');
  if (tools.length === 0) return undefined;
  return tools.map((tool, i) => chatTool(tool as Json, `tools[${i}]`));
}

/** A named tool reference (`{type, name}`) in chat form. */
function namedChoice(choice: Json, param: string): Json {
  refuseOtherKeys(choice, ['type', 'name'], param);
  if (typeof choice.name !== 'string') return unsupported(param, `'${param}.name' must be a string.`);
  return choice.type === 'function' ? { type: 'function', function: { name: choice.name } } : { type: 'custom', custom: { name: choice.name } };
}

/** The chat `tool_choice`, or undefined when the request sets none. */
export function translateToolChoice(choice: unknown): unknown {
  if (!isSet(choice)) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (!isObject(choice)) return unsupported('tool_choice', `The tool_choice ${JSON.stringify(choice)} is not supported.`);
  if (choice.type === 'function' || choice.type === 'custom') return namedChoice(choice, 'tool_choice');
  if (choice.type === 'allowed_tools') {
    refuseOtherKeys(choice, ['type', 'mode', 'tools'], 'tool_choice');
    if (!Array.isArray(choice.tools)) return unsupported('tool_choice.tools', "'tool_choice.tools' must be an array.");
    refuseBuiltins(choice.tools.map(typeOf), 'tool_choice');
    const tools = choice.tools.map((tool, i) => namedChoice(tool as Json, `tool_choice.tools[${i}]`));
    return { type: 'allowed_tools', allowed_tools: { mode: choice.mode, tools } };
  }
  refuseBuiltins([typeOf(choice)], 'tool_choice');
  throw new GatewayError('unsupported_parameter', 'This tool_choice is not supported.', { param: 'tool_choice' });
}
