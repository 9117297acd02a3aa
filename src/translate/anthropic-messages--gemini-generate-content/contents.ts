/**
 * Messages-format `system` and `messages` as Gemini `systemInstruction` and `contents`: text blocks
 * become text parts, base64 images and PDF documents `inlineData` parts (a plain-text document its
 * text), `tool_use` blocks `functionCall` parts of a `model` turn, `tool_result` blocks
 * `functionResponse` parts of a `user` turn named after the call they answer (the vendor matches results
 * to calls by function name). `cache_control` is a caching hint the vendor has no per-block form of
 * (it caches implicitly), so it asks for nothing here. A block this model cannot read is refused.
 */
import { invalid, unsupported } from '../refusals.js';
import { appendTurn, functionCallPart, functionResponsePart, inlinePart, type GeminiContent } from '../gemini-request.js';

type Rec = Record<string, unknown>;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

const BLOCK_KEYS: Record<string, readonly string[]> = {
  text: ['type', 'text', 'cache_control', 'citations'],
  image: ['type', 'source', 'cache_control'],
  document: ['type', 'source', 'cache_control', 'title', 'context'],
  tool_use: ['type', 'id', 'name', 'input', 'cache_control'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'],
};

function refuseExtra(block: Rec, type: string, param: string): void {
  for (const [key, value] of Object.entries(block)) {
    if (value === null || value === undefined || BLOCK_KEYS[type]!.includes(key)) continue;
    // A text block echoed from an answer may carry `citations: null` or `[]`; any citation is refused below.
    throw unsupported(`${param}.${key}`);
  }
  if (Array.isArray(block.citations) && block.citations.length > 0) throw unsupported(`${param}.citations`, 'this model does not take citations');
}

function textOf(block: Rec, param: string): string {
  if (typeof block.text !== 'string') throw invalid(`${param}.text`, `${param}.text must be a string.`);
  return block.text;
}

function sourceOf(block: Rec, param: string): Rec {
  const source = block.source;
  if (!source || typeof source !== 'object') throw invalid(`${param}.source`, `${param}.source is required.`);
  return source as Rec;
}

function imagePart(block: Rec, param: string): Rec {
  const source = sourceOf(block, param);
  if (source.type !== 'base64' || typeof source.data !== 'string' || typeof source.media_type !== 'string' || !IMAGE_TYPES.has(source.media_type)) {
    throw unsupported(`${param}.source`, 'images must be base64 sources of JPEG, PNG, GIF or WebP');
  }
  return inlinePart(source.media_type, source.data);
}

function documentPart(block: Rec, param: string): Rec {
  const source = sourceOf(block, param);
  if (source.type === 'base64' && source.media_type === 'application/pdf' && typeof source.data === 'string') return inlinePart('application/pdf', source.data);
  if (source.type === 'text' && typeof source.data === 'string') return { text: source.data };
  throw unsupported(`${param}.source`, 'documents must be base64 PDF or plain-text sources');
}

/** The text of a tool result's content (a string, or text blocks). */
function resultText(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(param, `${param} must be a string or an array of text blocks.`);
  return content.map((b: unknown, j) => {
    const block = (b ?? {}) as Rec;
    if (block.type !== 'text') throw unsupported(`${param}[${j}]`, 'tool results can only carry text for this model');
    refuseExtra(block, 'text', `${param}[${j}]`);
    return textOf(block, `${param}[${j}]`);
  }).join('');
}

/** The Gemini part of one block; `role` decides which block types it may carry. */
function blockPart(block: Rec, role: 'user' | 'assistant', param: string, names: Map<string, string>): Rec | null {
  const type = block.type;
  if (typeof type !== 'string' || !BLOCK_KEYS[type]) {
    if (type === 'thinking' || type === 'redacted_thinking') throw unsupported(param, 'thinking blocks cannot be sent back to this model');
    throw unsupported(param, `content blocks of type "${String(type)}" cannot be sent to this model`);
  }
  refuseExtra(block, type, param);
  const userOnly = type === 'tool_result' || type === 'image' || type === 'document';
  if ((type === 'tool_use' && role !== 'assistant') || (userOnly && role !== 'user')) {
    throw invalid(param, `${param}: a ${role} message cannot carry a ${type} block.`);
  }
  switch (type) {
    case 'text': return textOf(block, param) === '' ? null : { text: block.text };
    case 'image': return imagePart(block, param);
    case 'document': return documentPart(block, param);
    case 'tool_use': {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(param, `${param} needs an id and a name.`);
      const input = block.input ?? {};
      if (typeof input !== 'object' || Array.isArray(input)) throw invalid(`${param}.input`, `${param}.input must be an object.`);
      names.set(block.id, block.name);
      return functionCallPart(block.name, input as Rec);
    }
    default: {
      const id = block.tool_use_id;
      if (typeof id !== 'string') throw invalid(`${param}.tool_use_id`, `${param}.tool_use_id is required.`);
      const name = names.get(id);
      if (name === undefined) throw invalid(`${param}.tool_use_id`, `${param}.tool_use_id "${id}" answers no tool_use block of an earlier assistant message.`);
      const text = resultText(block.content, `${param}.content`);
      // An error result says so: the vendor reads `error` in a function's response as its failure.
      return functionResponsePart(name, block.is_error === true ? { error: text } : text);
    }
  }
}

/** The parts of one message's content (a string or blocks). */
function messageParts(content: unknown, role: 'user' | 'assistant', param: string, names: Map<string, string>): Rec[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) throw invalid(param, `${param} must be a string or an array of content blocks.`);
  return content.flatMap((b: unknown, j) => {
    if (!b || typeof b !== 'object') throw invalid(`${param}[${j}]`, `${param}[${j}] must be a content block.`);
    const part = blockPart(b as Rec, role, `${param}[${j}]`, names);
    return part ? [part] : [];
  });
}

/** The system instruction of `system` (a string or text blocks), or null. */
function systemInstruction(system: unknown): Rec | null {
  if (system === undefined || system === null) return null;
  if (typeof system === 'string') return system === '' ? null : { parts: [{ text: system }] };
  if (!Array.isArray(system)) throw invalid('system', 'system must be a string or an array of text blocks.');
  const parts = system.flatMap((b: unknown, j) => {
    const block = (b ?? {}) as Rec;
    if (block.type !== 'text') throw unsupported(`system[${j}]`, 'system blocks must be text');
    refuseExtra(block, 'text', `system[${j}]`);
    return textOf(block, `system[${j}]`) === '' ? [] : [{ text: block.text }];
  });
  return parts.length > 0 ? { parts } : null;
}

/** The system instruction (null when there is none) and the turns of a messages request. */
export function toGeminiContents(system: unknown, messages: unknown): { systemInstruction: Rec | null; contents: GeminiContent[] } {
  if (!Array.isArray(messages)) throw invalid('messages', 'messages must be an array.');
  const contents: GeminiContent[] = [];
  const names = new Map<string, string>();
  messages.forEach((raw: unknown, i) => {
    const param = `messages[${i}]`;
    const message = (raw ?? {}) as Rec;
    if (message.role !== 'user' && message.role !== 'assistant') throw invalid(`${param}.role`, `${param}.role must be user or assistant.`);
    appendTurn(contents, message.role === 'user' ? 'user' : 'model', messageParts(message.content, message.role, `${param}.content`, names));
  });
  return { systemInstruction: systemInstruction(system), contents };
}
