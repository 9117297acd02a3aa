/**
 * Chat-completions content (a string or an array of parts) as Messages content blocks: text parts
 * become text blocks, `image_url` parts image blocks (data: URLs as base64, http(s) URLs as url
 * sources), PDF `file` parts document blocks. A part this model cannot read is refused, naming it.
 */
import { parseDataUrl } from '../../data-url.js';
import { invalid, refuseExtraKeys, unsupported } from '../refusals.js';

export type Block = Record<string, unknown>;
type Part = Record<string, unknown>;

/** The part types each role may send (chat-completions' own rules). */
export type PartTypes = ReadonlySet<string>;
export const TEXT_ONLY: PartTypes = new Set(['text']);
export const USER_PARTS: PartTypes = new Set(['text', 'image_url', 'file', 'input_audio']);
export const ASSISTANT_PARTS: PartTypes = new Set(['text', 'refusal']);

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

function imageBlock(part: Part, param: string): Block {
  const image = part.image_url as { url?: unknown; detail?: unknown } | undefined;
  if (!image || typeof image.url !== 'string') throw invalid(`${param}.image_url.url`, `${param}.image_url.url must be a string.`);
  refuseExtraKeys(image, ['url', 'detail'], `${param}.image_url`);
  // This model reads every image at its own full resolution: "high" and "auto" ask for nothing more;
  // "low" asks for a cheaper, coarser reading it cannot give.
  if (image.detail === 'low') throw unsupported(`${param}.image_url.detail`, 'this model has no low-detail image mode');
  const inline = parseDataUrl(image.url);
  if (inline?.base64 && inline.mediaType) {
    if (!IMAGE_TYPES.has(inline.mediaType)) throw unsupported(`${param}.image_url`, `images must be JPEG, PNG, GIF or WebP (got ${inline.mediaType})`);
    return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.payload } };
  }
  if (/^https?:\/\//i.test(image.url)) return { type: 'image', source: { type: 'url', url: image.url } };
  throw unsupported(`${param}.image_url`, 'images must be base64 data: URLs or http(s) URLs');
}

function documentBlock(part: Part, param: string): Block {
  const file = part.file as { file_data?: unknown; file_id?: unknown; filename?: unknown } | undefined;
  if (!file || typeof file !== 'object') throw invalid(`${param}.file`, `${param}.file must be an object.`);
  refuseExtraKeys(file, ['file_data', 'file_id', 'filename'], `${param}.file`);
  if (file.file_id !== undefined && file.file_id !== null) throw unsupported(`${param}.file.file_id`, 'send the file inline as "file_data"');
  const inline = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null;
  if (!inline?.base64 || inline.mediaType !== 'application/pdf') {
    throw unsupported(`${param}.file`, 'files must be PDF documents sent as "file_data" data: URLs (data:application/pdf;base64,...)');
  }
  const block: Block = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: inline.payload } };
  if (typeof file.filename === 'string') block.title = file.filename;
  return block;
}

function partBlock(part: Part, param: string): Block {
  switch (part.type) {
    case 'text':
      refuseExtraKeys(part, ['type', 'text'], param);
      if (typeof part.text !== 'string') throw invalid(`${param}.text`, `${param}.text must be a string.`);
      return { type: 'text', text: part.text };
    case 'refusal':
      refuseExtraKeys(part, ['type', 'refusal'], param);
      if (typeof part.refusal !== 'string') throw invalid(`${param}.refusal`, `${param}.refusal must be a string.`);
      return { type: 'text', text: part.refusal };
    case 'image_url':
      refuseExtraKeys(part, ['type', 'image_url'], param);
      return imageBlock(part, param);
    case 'file':
      refuseExtraKeys(part, ['type', 'file'], param);
      return documentBlock(part, param);
    case 'input_audio':
      throw unsupported(param, 'this model does not accept audio input');
    default:
      throw invalid(param, `${param} has an unknown content part type.`);
  }
}

/** The blocks of one message's `content`; `allowed` are the part types its role may send. */
export function contentBlocks(content: unknown, allowed: PartTypes, param: string): Block[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(param, `${param} must be a string or an array of content parts.`);
  return content.map((part: unknown, j) => {
    const where = `${param}[${j}]`;
    if (!part || typeof part !== 'object') throw invalid(where, `${where} must be a content part object.`);
    const type = (part as Part).type;
    if (typeof type !== 'string' || !allowed.has(type)) {
      if (type === 'input_audio' || type === 'image_url' || type === 'file') throw unsupported(where, `this message role cannot carry "${type}" parts`);
      throw invalid(where, `${where} has a content part type this message role cannot carry.`);
    }
    return partBlock(part as Part, where);
  });
}
