/**
 * Responses `input` -> chat `messages`. Messages keep their role; tool calls the client replays
 * (`function_call`, `custom_tool_call`) join the assistant message before them, as chat carries them;
 * tool outputs become `role: "tool"` messages. Anything chat cannot carry is refused, never dropped.
 */
import { isObject, isSet, refuseOtherKeys, unsupported, type Json } from './common.js';

type Role = 'user' | 'assistant' | 'system' | 'developer';
const ROLES: readonly string[] = ['user', 'assistant', 'system', 'developer'];

function cannot(param: string, what: string): never {
  return unsupported(param, `${what} cannot be used with this model (it is served through chat completions).`);
}

function text(value: unknown, param: string): string {
  if (typeof value !== 'string') return unsupported(param, `'${param}' must be a string.`);
  return value;
}

/** One input image part as a chat `image_url` part. */
function imagePart(part: Json, param: string): Json {
  refuseOtherKeys(part, ['type', 'image_url', 'detail'], param);
  const image: Json = { url: text(part.image_url, `${param}.image_url`) };
  if (isSet(part.detail)) {
    if (part.detail !== 'auto' && part.detail !== 'low' && part.detail !== 'high') cannot(`${param}.detail`, `Image detail '${String(part.detail)}'`);
    image.detail = part.detail;
  }
  return { type: 'image_url', image_url: image };
}

/** One content part of a message with `role`, in chat form. */
function contentPart(part: unknown, role: Role, param: string): Json {
  if (!isObject(part)) return unsupported(param, `'${param}' must be an object.`);
  switch (part.type) {
    case 'input_text':
      refuseOtherKeys(part, ['type', 'text'], param);
      return { type: 'text', text: text(part.text, `${param}.text`) };
    case 'output_text':
      // A replayed answer: its annotations and logprobs describe the old output, not the prompt.
      if (role !== 'assistant') return cannot(param, `An output_text part in a ${role} message`);
      refuseOtherKeys(part, ['type', 'text', 'annotations', 'logprobs'], param);
      return { type: 'text', text: text(part.text, `${param}.text`) };
    case 'refusal':
      if (role !== 'assistant') return cannot(param, `A refusal part in a ${role} message`);
      refuseOtherKeys(part, ['type', 'refusal'], param);
      return { type: 'refusal', refusal: text(part.refusal, `${param}.refusal`) };
    case 'input_image':
      if (role !== 'user') return cannot(param, `An image in a ${role} message`);
      if (isSet(part.file_id)) return cannot(`${param}.file_id`, 'An image given by file_id');
      return imagePart(part, param);
    case 'input_file':
      return cannot(param, 'File inputs (input_file)');
    default:
      return cannot(param, `Content of type '${String(part.type)}'`);
  }
}

/** A message item (`{role, content}`, `type: "message"` or a replayed output message). */
function message(item: Json, param: string): Json {
  refuseOtherKeys(item, ['type', 'role', 'content', 'id', 'status', 'phase'], param);
  if (typeof item.role !== 'string' || !ROLES.includes(item.role)) return unsupported(`${param}.role`, `The role ${JSON.stringify(item.role)} is not supported.`);
  const role = item.role as Role;
  if (typeof item.content === 'string') return { role, content: item.content };
  if (!Array.isArray(item.content)) return unsupported(`${param}.content`, `'${param}.content' must be a string or an array.`);
  return { role, content: item.content.map((part, j) => contentPart(part, role, `${param}.content[${j}]`)) };
}

/** The content of a tool-output item: a string, or text parts. */
function toolOutput(output: unknown, param: string): unknown {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return unsupported(param, `'${param}' must be a string or an array.`);
  return output.map((part, j) => {
    const where = `${param}[${j}]`;
    if (!isObject(part) || part.type !== 'input_text') return cannot(where, 'A tool output that is not text');
    refuseOtherKeys(part, ['type', 'text'], where);
    return { type: 'text', text: text(part.text, `${where}.text`) };
  });
}

/** Appends a replayed tool call to the assistant message before it, or to a new one. */
function addToolCall(messages: Json[], call: Json): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') {
    last.tool_calls = [...((last.tool_calls as Json[] | undefined) ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', tool_calls: [call] });
}

function item(messages: Json[], entry: unknown, param: string): void {
  if (!isObject(entry)) return unsupported(param, `'${param}' must be an object.`);
  switch (entry.type ?? 'message') {
    case 'message':
      messages.push(message(entry, param));
      return;
    case 'function_call':
      refuseOtherKeys(entry, ['type', 'call_id', 'name', 'arguments', 'id', 'status'], param);
      addToolCall(messages, { id: entry.call_id, type: 'function', function: { name: entry.name, arguments: entry.arguments } });
      return;
    case 'custom_tool_call':
      refuseOtherKeys(entry, ['type', 'call_id', 'name', 'input', 'id'], param);
      addToolCall(messages, { id: entry.call_id, type: 'custom', custom: { name: entry.name, input: entry.input } });
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      refuseOtherKeys(entry, ['type', 'call_id', 'output', 'id', 'status'], param);
      messages.push({ role: 'tool', tool_call_id: entry.call_id, content: toolOutput(entry.output, `${param}.output`) });
      return;
    default:
      cannot(param, `Input items of type '${String(entry.type)}'`);
  }
}

/** The chat messages for a Responses `input` (a string or a list of items). */
export function translateInput(input: unknown): Json[] {
  if (!isSet(input)) return [];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) return unsupported('input', "'input' must be a string or an array.");
  const messages: Json[] = [];
  input.forEach((entry, i) => item(messages, entry, `input[${i}]`));
  return messages;
}
