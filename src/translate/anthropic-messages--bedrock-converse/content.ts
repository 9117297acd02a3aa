/**
 * Messages content blocks as Converse ones (Bedrock's Smithy model, docs/vendors/bedrock-converse.md):
 * `text` -> `{text}`, a base64 `image` -> `{image: {format, source: {bytes}}}`, a base64 PDF `document`
 * -> `{document: {format: pdf, name, source: {bytes}}}`, `tool_use` -> `{toolUse}`, `tool_result` ->
 * `{toolResult}`. A block's `cache_control` becomes a `{cachePoint: {type: default}}` block after it,
 * which is how Bedrock marks a prompt-cache breakpoint. A block Converse cannot carry (an image by URL,
 * thinking, server tools) is refused, naming it.
 */
import { invalid, refuseExtraKeys, unsupported } from '../refusals.js';

export type Json = Record<string, unknown>;

/** Converse's cache breakpoint block. */
export const CACHE_POINT: Json = { cachePoint: { type: 'default' } };

/** The image formats Converse takes (ImageFormat), by media type. */
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Refuses any key of `block` outside `allowed` (null counts as absent). */
export function onlyKeys(block: Json, allowed: readonly string[], param: string): void {
  refuseExtraKeys(block, allowed, param, 'Bedrock Converse has no equivalent');
}

function imageBlock(block: Json, param: string): Json {
  const source = isRecord(block.source) ? block.source : null;
  if (source?.type !== 'base64') throw unsupported(`${param}.source`, 'Bedrock takes images as base64 bytes only (no URLs or file ids)');
  const format = typeof source.media_type === 'string' ? IMAGE_FORMATS[source.media_type] : undefined;
  if (!format) throw unsupported(`${param}.source.media_type`, 'images must be PNG, JPEG, GIF or WebP');
  return { image: { format, source: { bytes: source.data } } };
}

/** A document's name as Converse allows it (letters, digits, spaces, hyphens, parentheses, brackets). */
function documentName(title: unknown, index: number): string {
  const cleaned = typeof title === 'string' ? title.replace(/[^A-Za-z0-9 ()[\]-]+/g, ' ').replace(/\s+/g, ' ').trim() : '';
  return cleaned || `document-${index + 1}`;
}

function documentBlock(block: Json, param: string, index: number): Json {
  const source = isRecord(block.source) ? block.source : null;
  if (source?.type !== 'base64' || source.media_type !== 'application/pdf') throw unsupported(`${param}.source`, 'Bedrock takes documents here as base64 PDFs only');
  return { document: { format: 'pdf', name: documentName(block.title, index), source: { bytes: source.data } } };
}

function toolResultContent(content: unknown, param: string): Json[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) throw invalid(param, `${param} must be a string or an array of blocks.`);
  return content.map((part: unknown, i) => {
    const where = `${param}[${i}]`;
    if (!isRecord(part)) throw invalid(where, `${where} must be a block object.`);
    if (part.type === 'text') { onlyKeys(part, ['type', 'text', 'cache_control', 'citations'], where); return { text: part.text }; }
    if (part.type === 'image') { onlyKeys(part, ['type', 'source', 'cache_control'], where); return imageBlock(part, where); }
    throw unsupported(where, 'a tool result carries text and images only on Bedrock');
  });
}

/** One Messages block as Converse blocks (the block, then a cache point when it asked for one). */
function convertBlock(block: unknown, param: string, index: number): Json[] {
  if (!isRecord(block)) throw invalid(param, `${param} must be a content block object.`);
  let out: Json;
  switch (block.type) {
    case 'text':
      onlyKeys(block, ['type', 'text', 'cache_control', 'citations'], param);
      if (typeof block.text !== 'string') throw invalid(`${param}.text`, `${param}.text must be a string.`);
      out = { text: block.text };
      break;
    case 'image':
      onlyKeys(block, ['type', 'source', 'cache_control'], param);
      out = imageBlock(block, param);
      break;
    case 'document':
      onlyKeys(block, ['type', 'source', 'title', 'cache_control'], param);
      out = documentBlock(block, param, index);
      break;
    case 'tool_use':
      onlyKeys(block, ['type', 'id', 'name', 'input', 'cache_control'], param);
      out = { toolUse: { toolUseId: block.id, name: block.name, input: block.input ?? {} } };
      break;
    case 'tool_result': {
      onlyKeys(block, ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'], param);
      const result: Json = { toolUseId: block.tool_use_id, content: toolResultContent(block.content, `${param}.content`) };
      if (block.is_error === true) result.status = 'error';
      out = { toolResult: result };
      break;
    }
    default:
      throw unsupported(`${param}.type`, `"${String(block.type)}" blocks cannot be sent to a Bedrock model`);
  }
  return block.cache_control ? [out, CACHE_POINT] : [out];
}

/** A message's `content` (a string or blocks) as Converse blocks. */
export function converseContent(content: unknown, param: string): Json[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) throw invalid(param, `${param} must be a string or an array of content blocks.`);
  return content.flatMap((block: unknown, i) => convertBlock(block, `${param}[${i}]`, i));
}

/** The top-level `system` (a string or text blocks) as Converse SystemContentBlocks, or null. */
export function converseSystem(system: unknown): Json[] | null {
  if (system === undefined || system === null) return null;
  if (typeof system === 'string') return system === '' ? null : [{ text: system }];
  if (!Array.isArray(system)) throw invalid('system', 'system must be a string or an array of text blocks.');
  const blocks = system.flatMap((block: unknown, i) => {
    const param = `system[${i}]`;
    if (!isRecord(block) || block.type !== 'text') throw invalid(param, `${param} must be a text block.`);
    onlyKeys(block, ['type', 'text', 'cache_control', 'citations'], param);
    return block.cache_control ? [{ text: block.text }, CACHE_POINT] : [{ text: block.text }];
  });
  return blocks.length > 0 ? blocks : null;
}
