/**
 * The native OCR request (spec 4.12, POST /v1/ocr) to Azure Document Intelligence's read model
 * (`POST /documentintelligence/documentModels/prebuilt-read:analyze?api-version=2025-09-01`, polled by
 * the engine: the operation's `poll:`). `image` holds the verified input as a data URL (the route's
 * `url_inputs` fetched a `url` or took a `file_id`'s bytes); it goes as `base64Source`, with the
 * optional `pages` range and `locale` hint as query parameters. The answer is `text` (the vendor's
 * `content`, all pages in reading order), `pages` (lines and words with their positions) and
 * `usage.pages`, the pages the vendor reports processed, which is what is billed (spec 1).
 */
import type { Translator, TranslatorOptions } from '../types.js';
import { clientPages, documentIntelligenceTranslator } from '../azure-document-intelligence.js';

/** Creates the OCR translator for one request; a malformed input or an image out of the vendor's sizes is a 400 naming `image`. */
export function createNativeJsonToAzureDiRead(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  return documentIntelligenceTranslator(clientBody, 'image', 'OCR', (result, clientModel) => {
    const { pages, count } = clientPages(result, 'OCR');
    return { body: { object: 'ocr', model: clientModel, text: result.content, pages, usage: { pages: count } }, pages: count };
  });
}
