/**
 * Chat-completions messages as Gemini `contents` and `systemInstruction`. System and developer
 * messages become the system instruction; user parts become text and `inlineData` parts (images, PDF
 * files and audio sent inline); assistant `tool_calls` become `functionCall` parts of a `model` turn;
 * `tool` messages become `functionResponse` parts of a `user` turn, named after the call they answer
 * (the vendor matches results to calls by function name, which a tool message does not carry).
 * Consecutive turns of one role are merged. A part this model cannot read is refused, naming it.
 */
import { parseDataUrl } from '../../data-url.js';
import { invalid, refuseExtraKeys, unsupported } from '../refusals.js';
import { appendTurn, functionCallPart, functionResponsePart, inlinePart, type GeminiContent } from '../gemini-request.js';

type Rec = Record<string, unknown>;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic', 'image/heif']);
const AUDIO_FORMATS: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

const ALLOWED_KEYS: Record<string, readonly string[]> = {
  system: ['role', 'content'],
  developer: ['role', 'content'],
  user: ['role', 'content'],
  assistant: ['role', 'content', 'tool_calls', 'refusal'],
  tool: ['role', 'content', 'tool_call_id'],
};

function textOf(part: Rec, param: string): string {
  if (typeof part.text !== 'string') throw invalid(`${param}.text`, `${param}.text must be a string.`);
  return part.text;
}

function imagePart(part: Rec, param: string): Rec {
  const image = part.image_url as { url?: unknown; detail?: unknown } | undefined;
  if (!image || typeof image.url !== 'string') throw invalid(`${param}.image_url.url`, `${param}.image_url.url must be a string.`);
  refuseExtraKeys(image, ['url', 'detail'], `${param}.image_url`);
  // The vendor's per-request media resolution is not a per-image detail: only "auto" asks for nothing.
  if (image.detail !== undefined && image.detail !== null && image.detail !== 'auto') throw unsupported(`${param}.image_url.detail`, 'this model has no per-image detail setting');
  const inline = parseDataUrl(image.url);
  if (!inline?.base64 || !IMAGE_TYPES.has(inline.mediaType)) throw unsupported(`${param}.image_url`, 'images must be base64 data: URLs of JPEG, PNG, GIF, WebP, HEIC or HEIF');
  return inlinePart(inline.mediaType, inline.payload);
}

function filePart(part: Rec, param: string): Rec {
  const file = part.file as { file_data?: unknown; file_id?: unknown; filename?: unknown } | undefined;
  if (!file || typeof file !== 'object') throw invalid(`${param}.file`, `${param}.file must be an object.`);
  refuseExtraKeys(file, ['file_data', 'file_id', 'filename'], `${param}.file`);
  const inline = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null;
  if (!inline?.base64 || inline.mediaType !== 'application/pdf') {
    throw unsupported(`${param}.file`, 'files must be PDF documents sent as "file_data" data: URLs (data:application/pdf;base64,...)');
  }
  return inlinePart('application/pdf', inline.payload);
}

function audioPart(part: Rec, param: string): Rec {
  const audio = part.input_audio as { data?: unknown; format?: unknown } | undefined;
  if (!audio || typeof audio.data !== 'string') throw invalid(`${param}.input_audio.data`, `${param}.input_audio.data must be a string.`);
  const mime = typeof audio.format === 'string' ? AUDIO_FORMATS[audio.format] : undefined;
  if (!mime) throw unsupported(`${param}.input_audio.format`, 'audio must be wav or mp3');
  return inlinePart(mime, audio.data);
}

/** The Gemini parts of one message's content; `allowed` are the part types its role may send. */
function contentParts(content: unknown, allowed: ReadonlySet<string>, param: string): Rec[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) throw invalid(param, `${param} must be a string or an array of content parts.`);
  return content.flatMap((raw: unknown, j): Rec[] => {
    const where = `${param}[${j}]`;
    if (!raw || typeof raw !== 'object') throw invalid(where, `${where} must be a content part object.`);
    const part = raw as Rec;
    if (typeof part.type !== 'string' || !allowed.has(part.type)) throw invalid(where, `${where} has a content part type this message role cannot carry.`);
    switch (part.type) {
      case 'text': refuseExtraKeys(part, ['type', 'text'], where); return textOf(part, where) === '' ? [] : [{ text: part.text }];
      case 'refusal': refuseExtraKeys(part, ['type', 'refusal'], where); return typeof part.refusal === 'string' && part.refusal !== '' ? [{ text: part.refusal }] : [];
      case 'image_url': refuseExtraKeys(part, ['type', 'image_url'], where); return [imagePart(part, where)];
      case 'file': refuseExtraKeys(part, ['type', 'file'], where); return [filePart(part, where)];
      default: refuseExtraKeys(part, ['type', 'input_audio'], where); return [audioPart(part, where)];
    }
  });
}

const TEXT_ONLY = new Set(['text']);
const USER_PARTS = new Set(['text', 'image_url', 'file', 'input_audio']);
const ASSISTANT_PARTS = new Set(['text', 'refusal']);

/** The `functionCall` parts of an assistant's `tool_calls`, remembering each call's function name by id. */
function callParts(calls: unknown, param: string, names: Map<string, string>): Rec[] {
  if (calls === null || calls === undefined) return [];
  if (!Array.isArray(calls)) throw invalid(param, `${param} must be an array.`);
  return calls.map((call: unknown, j) => {
    const where = `${param}[${j}]`;
    const { id, type, function: fn } = (call ?? {}) as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
    if (type !== 'function') throw unsupported(`${where}.type`, 'only function tool calls can be sent to this model');
    if (typeof id !== 'string' || !fn || typeof fn.name !== 'string') throw invalid(where, `${where} needs an id and a function name.`);
    const text = typeof fn.arguments === 'string' ? fn.arguments.trim() : '';
    let args: unknown = {};
    if (text !== '') {
      try { args = JSON.parse(text); } catch { throw invalid(`${where}.function.arguments`, `${where}.function.arguments is not valid JSON.`); }
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) throw invalid(`${where}.function.arguments`, `${where}.function.arguments must be a JSON object.`);
    names.set(id, fn.name);
    return functionCallPart(fn.name, args as Rec);
  });
}

/** The `functionResponse` part of a tool message, named after the call its `tool_call_id` names. */
function resultPart(message: Rec, param: string, names: ReadonlyMap<string, string>): Rec {
  refuseExtraKeys(message, ALLOWED_KEYS.tool!, param);
  const id = message.tool_call_id;
  if (typeof id !== 'string') throw invalid(`${param}.tool_call_id`, `${param}.tool_call_id is required.`);
  const name = names.get(id);
  if (name === undefined) throw invalid(`${param}.tool_call_id`, `${param}.tool_call_id "${id}" answers no tool call of an earlier assistant message.`);
  const text = typeof message.content === 'string' ? message.content : contentParts(message.content, TEXT_ONLY, `${param}.content`).map((p) => p.text as string).join('');
  return functionResponsePart(name, text);
}

/** The system instruction (null when there is none) and the turns of `messages`. */
export function toGeminiContents(input: unknown): { systemInstruction: Rec | null; contents: GeminiContent[] } {
  if (!Array.isArray(input)) throw invalid('messages', 'messages must be an array.');
  const system: Rec[] = [];
  const contents: GeminiContent[] = [];
  const names = new Map<string, string>();
  input.forEach((raw: unknown, i) => {
    const param = `messages[${i}]`;
    if (!raw || typeof raw !== 'object') throw invalid(param, `${param} must be a message object.`);
    const message = { ...(raw as Rec) };
    const role = message.role;
    if (role === 'assistant' && Array.isArray(message.annotations) && message.annotations.length === 0) delete message.annotations;
    if (typeof role === 'string' && ALLOWED_KEYS[role]) refuseExtraKeys(message, ALLOWED_KEYS[role]!, param);
    switch (role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(message.content, TEXT_ONLY, `${param}.content`));
        return;
      case 'user':
        appendTurn(contents, 'user', contentParts(message.content, USER_PARTS, `${param}.content`));
        return;
      case 'assistant': {
        const parts = contentParts(message.content, ASSISTANT_PARTS, `${param}.content`);
        if (typeof message.refusal === 'string' && message.refusal !== '') parts.push({ text: message.refusal });
        appendTurn(contents, 'model', [...parts, ...callParts(message.tool_calls, `${param}.tool_calls`, names)]);
        return;
      }
      case 'tool':
        appendTurn(contents, 'user', [resultPart(message, param, names)]);
        return;
      case 'function':
        throw unsupported(`${param}.role`, 'the deprecated "function" role cannot be sent to this model; use tool messages');
      default:
        throw invalid(`${param}.role`, `${param}.role must be one of system, developer, user, assistant or tool.`);
    }
  });
  return { systemInstruction: system.length > 0 ? { parts: system } : null, contents };
}
