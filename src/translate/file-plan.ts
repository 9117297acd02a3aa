/**
 * A binary answer's client file from its plan (issue 9 point 3): the buffered path runs on the whole
 * file the same head and tail checks the streaming path runs on the first and last bytes, so a
 * translator states its checks once (src/translate/types.ts `FilePlan`).
 */
import type { FilePlan, TranslatedFile } from './types.js';

/** The client's file for a whole answer: `plan`'s checks on its first and last bytes, then its bytes as they are. */
export function wholeFile(plan: FilePlan, data: Buffer): TranslatedFile {
  plan.checkHead(data.subarray(0, plan.headBytes));
  if (plan.tailBytes > 0) plan.checkTail?.(data.subarray(Math.max(0, data.length - plan.tailBytes)));
  return { data, contentType: plan.contentType, filename: plan.filename, ...(plan.quantities ? { quantities: plan.quantities } : {}) };
}
