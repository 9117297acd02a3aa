/**
 * PII redaction (spec 4.9 `POST /v1/documents/redact-pii`) to the redaction contract of
 * docs/vendors/pii-redaction.md (`POST {endpoint}/pii/v1/documents:redact-pdf`, the contract the
 * gateway speaks pending certification: no vendor spec of such an API is in ../shared/specs).
 *
 * The PDF goes as the raw body (`application/pdf`; the route's `probe: pdf` parsed it and counted its
 * pages before anything was reserved), `language` as a query parameter when the client gave one. The
 * 200 is the redacted PDF's bytes: a 200 that is not a whole PDF is the upstream's fault (502, nothing
 * billed; checked on its first and last kilobyte, so it can stream through). Pages are counted locally (spec 4.9), so the answer reports no quantity. The download is
 * named after the client's file (`scan.pdf`: `scan.redacted.pdf`). Errors are `{error: {code, message}}`.
 */
import { RawBody } from '../../upstream/raw-body.js';
import { documentPart, downloadName, noJson, noStream, pdfPlan } from '../documents.js';
import { wholeFile } from '../file-plan.js';
import type { FilePlan, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Creates the PII redaction translator for one request. */
export function createNativeJsonToPiiRedaction(_clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  let clientName: string | undefined;
  const plan = (): FilePlan => pdfPlan(downloadName(clientName, 'redacted', 'pdf'));
  return {
    request(_body, _offering, files) {
      const document = documentPart(files);
      clientName = document.filename;
      return new RawBody(document.data, 'application/pdf');
    },
    query: (body): Record<string, string[]> => (typeof body.language === 'string' ? { language: [body.language] } : {}),
    response: noJson,
    filePlan: plan,
    file: (data) => wholeFile(plan(), data),
    stream: noStream,
    error: mapUpstreamError,
  };
}
