/**
 * The one reader of `data:` URLs (RFC 2397: `data:[<media type>][;<parameter>]*[;base64],<data>`), for
 * every place a client may send bytes inline: image inputs (spec 4.11, 4.12), URL inputs, and chat
 * image parts translated to the messages format. It only splits the URL; each caller checks the
 * payload its own way (strict base64 where bytes are decoded, a size bound before decoding).
 */

/** A data URL, split. */
export interface DataUrl {
  /** The declared media type, lower-cased ('' when absent): only what the client claims. */
  mediaType: string;
  /** Whether the last parameter is `base64`. */
  base64: boolean;
  /** Everything after the first comma, as sent. */
  payload: string;
}

/** Splits `text` when it is a data URL (case-insensitive scheme); null otherwise. */
export function parseDataUrl(text: string): DataUrl | null {
  if (text.length < 6 || text.slice(0, 5).toLowerCase() !== 'data:') return null;
  const comma = text.indexOf(',');
  if (comma < 0) return null;
  const header = text.slice(5, comma).split(';');
  const base64 = header.length > 1 && header.at(-1)!.toLowerCase() === 'base64';
  return { mediaType: header[0]!.trim().toLowerCase(), base64, payload: text.slice(comma + 1) };
}
