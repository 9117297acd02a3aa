/**
 * The native moderation request (spec 4.11) with `text` to Azure AI Content Safety
 * `POST /contentsafety/text:analyze?api-version=2024-09-01` (docs/vendors/native-ops.md section 3).
 * The request schema admits exactly one of `text`, `image`, `file_id`, and the route sends an image
 * (a file_id is inline by then) to `image:analyze` (native-json--azure-content-safety-image); an image
 * reaching this translator is refused with a 400 naming it, before anything is reserved. `categories`
 * restrict the scoring (all four when absent); the answer is src/translate/azure-content-safety.ts's.
 */
import { GatewayError } from '../../errors.js';
import { categoriesOf, contentSafetyTranslator } from '../azure-content-safety.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** Refuses a request without text, naming the input it has instead. */
function checkInput(body: Record<string, unknown>): void {
  if (body.text !== undefined) return;
  const other = ['image', 'file_id'].find((name) => body[name] !== undefined);
  if (other) throw new GatewayError('unsupported_parameter', `This model scores text only; '${other}' is not supported. Send 'text'.`, { param: other });
  throw new GatewayError('invalid_request', "Missing input: provide exactly one of 'text', 'image' or 'file_id'.", { param: 'text' });
}

/** Creates the text moderation translator for one request. */
export function createNativeJsonToAzureContentSafety(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  checkInput(clientBody);
  return contentSafetyTranslator((body) => ({ text: body.text, ...categoriesOf(body) }));
}
