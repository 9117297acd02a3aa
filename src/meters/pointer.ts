/** JSON Pointers (RFC 6901) as the manifests write them: parsed once at compile time, read per request. */
import { ManifestError } from '../config/errors.js';

/** A parsed pointer: its reference tokens, unescaped. `/` is the whole document's child "" (never used). */
export type Pointer = readonly string[];

/** Parses `/a/b~1c` into ['a', 'b/c']; throws on text that is not a pointer. */
export function parsePointer(text: string): Pointer {
  if (!text.startsWith('/')) throw new Error(`"${text}" is not a JSON Pointer (it must start with /)`);
  return text.slice(1).split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Parses a manifest's pointer; a ManifestError names the file and path when it is not one. */
export function manifestPointer(file: string, path: string, text: string): Pointer {
  try { return parsePointer(text); } catch (error) { throw new ManifestError(file, path, (error as Error).message); }
}

/** The value at `pointer` in `doc`, or undefined when any step is missing. Array steps are indexes. */
export function readPointer(doc: unknown, pointer: Pointer): unknown {
  let value = doc;
  for (const token of pointer) {
    if (Array.isArray(value)) value = /^(0|[1-9]\d*)$/.test(token) ? value[Number(token)] : undefined;
    else if (value !== null && typeof value === 'object') value = Object.prototype.hasOwnProperty.call(value, token) ? (value as Record<string, unknown>)[token] : undefined;
    else return undefined;
  }
  return value;
}
