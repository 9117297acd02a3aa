/**
 * What bytes are, from their magic numbers (file-type). The module is loaded on the first call, not
 * at start: a gateway that never sees a file does not keep its tables resident (issue 8, memory).
 */
type FileTypeModule = typeof import('file-type');

let loaded: Promise<FileTypeModule> | null = null;

/** The detected type (`mime`, `ext`), or undefined when the bytes are not a known format. */
export async function sniffType(bytes: Uint8Array): Promise<{ mime: string; ext: string } | undefined> {
  loaded ??= import('file-type');
  return (await loaded).fileTypeFromBuffer(bytes);
}
