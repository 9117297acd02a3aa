/**
 * Chat-completions messages and tools as Messages ones. System and developer messages become the
 * top-level `system`; assistant `tool_calls` become `tool_use` blocks; `tool` messages become
 * `tool_result` blocks of a user message. Anthropic wants user and assistant turns to alternate, so
 * consecutive messages of one role are merged (tool results first, then any user text after them).
 */
import { ASSISTANT_PARTS, type Block, contentBlocks, TEXT_ONLY, USER_PARTS } from './content.js';
import { invalid, refuseExtraKeys, unsupported } from '../refusals.js';

type Msg = Record<string, unknown>;
export interface AnthropicMessage { role: 'user' | 'assistant'; content: Block[] }

const ALLOWED_KEYS: Record<string, readonly string[]> = {
  system: ['role', 'content'],
  developer: ['role', 'content'],
  user: ['role', 'content'],
  // An assistant message echoed from a previous answer may also carry `annotations: []` (accepted).
  assistant: ['role', 'content', 'tool_calls', 'refusal'],
  tool: ['role', 'content', 'tool_call_id'],
};

function toolUse(call: unknown, param: string): Block {
  if (!call || typeof call !== 'object') throw invalid(param, `${param} must be a tool call object.`);
  const { id, type, function: fn } = call as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
  if (type !== 'function') throw unsupported(`${param}.type`, 'only function tool calls can be sent to this model');
  if (typeof id !== 'string' || !fn || typeof fn.name !== 'string') throw invalid(param, `${param} needs an id and a function name.`);
  const args = typeof fn.arguments === 'string' ? fn.arguments.trim() : '';
  let input: unknown = {};
  if (args !== '') {
    try { input = JSON.parse(args); }
    catch { throw invalid(`${param}.function.arguments`, `${param}.function.arguments is not valid JSON.`); }
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw invalid(`${param}.function.arguments`, `${param}.function.arguments must be a JSON object.`);
  }
  return { type: 'tool_use', id, name: fn.name, input };
}

function assistantBlocks(message: Msg, param: string): Block[] {
  if (Array.isArray(message.annotations) && message.annotations.length === 0) delete message.annotations;
  refuseExtraKeys(message, ALLOWED_KEYS.assistant!, param);
  const blocks = contentBlocks(message.content, ASSISTANT_PARTS, `${param}.content`);
  if (typeof message.refusal === 'string') blocks.push({ type: 'text', text: message.refusal });
  // Anthropic refuses empty text blocks; an empty assistant text (common next to tool calls) says nothing.
  const out = blocks.filter((b) => b.type !== 'text' || b.text !== '');
  const calls = message.tool_calls;
  if (calls !== null && calls !== undefined) {
    if (!Array.isArray(calls)) throw invalid(`${param}.tool_calls`, `${param}.tool_calls must be an array.`);
    calls.forEach((call, j) => out.push(toolUse(call, `${param}.tool_calls[${j}]`)));
  }
  return out;
}

function toolResult(message: Msg, param: string): Block {
  refuseExtraKeys(message, ALLOWED_KEYS.tool!, param);
  if (typeof message.tool_call_id !== 'string') throw invalid(`${param}.tool_call_id`, `${param}.tool_call_id is required.`);
  const content = typeof message.content === 'string' ? message.content : contentBlocks(message.content, TEXT_ONLY, `${param}.content`);
  return { type: 'tool_result', tool_use_id: message.tool_call_id, content };
}

/** The top-level `system` (null when there is none) and the alternating messages. */
export function toAnthropicMessages(input: unknown): { system: string | Block[] | null; messages: AnthropicMessage[] } {
  if (!Array.isArray(input)) throw invalid('messages', 'messages must be an array.');
  const system: Block[] = [];
  const messages: AnthropicMessage[] = [];
  const append = (role: 'user' | 'assistant', blocks: Block[]): void => {
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  input.forEach((raw: unknown, i) => {
    const param = `messages[${i}]`;
    if (!raw || typeof raw !== 'object') throw invalid(param, `${param} must be a message object.`);
    const message = { ...(raw as Msg) };
    const role = message.role;
    switch (role) {
      case 'system':
      case 'developer':
        refuseExtraKeys(message, ALLOWED_KEYS[role]!, param);
        system.push(...contentBlocks(message.content, TEXT_ONLY, `${param}.content`).filter((b) => b.text !== ''));
        return;
      case 'user':
        refuseExtraKeys(message, ALLOWED_KEYS.user!, param);
        append('user', contentBlocks(message.content, USER_PARTS, `${param}.content`));
        return;
      case 'assistant': {
        const blocks = assistantBlocks(message, param);
        if (blocks.length > 0) append('assistant', blocks);
        return;
      }
      case 'tool':
        append('user', [toolResult(message, param)]);
        return;
      case 'function':
        throw unsupported(`${param}.role`, 'the deprecated "function" role cannot be sent to this model; use tool messages');
      default:
        throw invalid(`${param}.role`, `${param}.role must be one of system, developer, user, assistant or tool.`);
    }
  });
  const only = system.length === 1 ? system[0]!.text : undefined;
  return { system: typeof only === 'string' ? only : system.length > 0 ? system : null, messages };
}

/** Messages tools for chat-completions `tools`, or null when there are none. */
export function toAnthropicTools(tools: unknown): Block[] | null {
  if (tools === null || tools === undefined) return null;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  if (tools.length === 0) return null;
  return tools.map((tool: unknown, i) => {
    const param = `tools[${i}]`;
    const t = (tool ?? {}) as { type?: unknown; function?: Record<string, unknown> };
    if (t.type !== 'function') throw unsupported(`${param}.type`, 'only function tools can be sent to this model');
    const fn = t.function;
    if (!fn || typeof fn.name !== 'string') throw invalid(`${param}.function.name`, `${param}.function.name is required.`);
    refuseExtraKeys(fn, ['name', 'description', 'parameters', 'strict'], `${param}.function`);
    const out: Block = { name: fn.name };
    if (typeof fn.description === 'string') out.description = fn.description;
    // A function without parameters takes none; Anthropic requires an object schema.
    out.input_schema = fn.parameters ?? { type: 'object', properties: {} };
    if (typeof fn.strict === 'boolean') out.strict = fn.strict;
    return out;
  });
}

/** Messages `tool_choice`, or null when the default (auto, parallel calls allowed) applies. */
export function toAnthropicToolChoice(choice: unknown, parallel: unknown, hasTools: boolean): Block | null {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  let out: Block | null;
  if (choice === null || choice === undefined || choice === 'auto') out = { type: 'auto', ...single };
  else if (choice === 'none') out = { type: 'none' };
  else if (choice === 'required') out = { type: 'any', ...single };
  else if (typeof choice === 'object' && (choice as { type?: unknown }).type === 'function') {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    if (typeof name !== 'string') throw invalid('tool_choice.function.name', 'tool_choice.function.name is required.');
    out = { type: 'tool', name, ...single };
  } else throw unsupported('tool_choice', 'only "none", "auto", "required" and a named function can be sent to this model');
  if (!hasTools) {
    // Without tools, "none" and "auto" ask for nothing; forcing a tool call is a client error.
    if (out.type === 'tool' || out.type === 'any') throw invalid('tool_choice', 'tool_choice requires tools.');
    return null;
  }
  if (choice === null || choice === undefined) return parallel === false ? out : null;
  return out;
}
