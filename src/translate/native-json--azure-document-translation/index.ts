/**
 * Document translation (spec 4.9 `POST /v1/documents/translate`) to Azure Document Translation's
 * synchronous `POST {endpoint}/translator/document:translate?api-version=2026-03-01` (operation
 * DocumentTranslationOperations_DocumentTranslate of
 * ../shared/specs/azure/document-translation/DocumentTranslation-2026-03-01.openapi.json;
 * docs/vendors/azure-document-translation.md).
 *
 * The request is multipart/form-data with the one file part `document` (required by the spec), typed
 * as a DOCX: the route's `probe: docx` verified the bytes before anything was reserved. `to` and
 * `from` become the query's `targetLanguage` (required) and `sourceLanguage` (absent: the vendor
 * detects the language). The 200 is the translated document's bytes, with `x-metered-usage`: "the
 * number of characters for which the user will be charged", the quantity billed (spec 1: "Document
 * translation: characters", header X-Gateway-Characters). An answer without a whole number there, or
 * whose bytes are not a zip package, is the upstream's fault: 502, nothing billed. The download is
 * named after the client's file and the target language (`report.docx` to fr: `report.fr.docx`).
 * Errors are Azure.Core's (`{error: {code, message, innererror?}}`).
 */
import { Blob } from 'node:buffer';
import { FormData } from 'undici';
import { GatewayError } from '../../errors.js';
import { azureCoreError } from '../upstream-error.js';
import { docxPlan, documentPart, DOCX_TYPE, downloadName, fileStem, noJson, noStream } from '../documents.js';
import { wholeFile } from '../file-plan.js';
import type { FilePlan, Translator, TranslatorOptions } from '../types.js';

/** The response header carrying the characters charged (an int32 in the spec). */
export const METERED_USAGE_HEADER = 'x-metered-usage';

/** The characters charged from `x-metered-usage`: a whole number (digits only), else a 502. */
export function meteredCharacters(headers: Readonly<Record<string, string>>): number {
  const raw = headers[METERED_USAGE_HEADER];
  const value = typeof raw === 'string' && /^\s*\d{1,15}\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value)) {
    throw new GatewayError('upstream_error', 'The upstream provider sent the translated document without a usable count of the characters it charged (x-metered-usage).');
  }
  return value;
}

/** Creates the document translation translator for one request. */
export function createNativeJsonToAzureDocumentTranslation(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const to = String(clientBody.to);
  let clientName: string | undefined;
  // The charged characters are in the headers: known before the bytes, so the DOCX can stream through.
  const plan = (headers: Readonly<Record<string, string>>): FilePlan => docxPlan(downloadName(clientName, to, 'docx'), { characters: meteredCharacters(headers) });
  return {
    request(_body, _offering, files) {
      const document = documentPart(files);
      clientName = document.filename;
      const form = new FormData();
      // The vendor reads the format from the part's type and name: both say DOCX whatever the client called it.
      form.append('document', new Blob([document.data], { type: DOCX_TYPE }), `${fileStem(document.filename, 'docx')}.docx`);
      return form;
    },
    query(body) {
      const query: Record<string, string[]> = { targetLanguage: [String(body.to)] };
      if (typeof body.from === 'string') query.sourceLanguage = [body.from];
      return query;
    },
    response: noJson,
    filePlan: plan,
    file: (data, headers) => wholeFile(plan(headers), data),
    stream: noStream,
    error: azureCoreError,
  };
}
