/**
 * PII redaction (spec 4.9 `POST /v1/documents/redact-pii`) to the redaction contract of
 * docs/vendors/pii-redaction.md (`POST {endpoint}/pii/v1/documents:redact-pdf`, the contract the
 * gateway speaks pending certification: no vendor spec of such an API is in ../shared/specs).
 *
 * The PDF goes as the raw body (`application/pdf`; the route's `probe: pdf` parsed it and counted its
 * pages before anything was reserved), `language` as a query parameter when the client gave one. The
 * 200 is the redacted PDF's bytes: a 200 that is not a whole PDF is the upstream's fault (502, nothing
 * billed). Pages are counted locally (spec 4.9), so the answer reports no quantity. The download is
 * named after the client's file (`scan.pdf`: `scan.redacted.pdf`). Errors are `{error: {code, message}}`.
 */
import { RawBody } from '../../upstream/raw-body.js';
import { documentPart, downloadName, looksLikePdf, noJson, noStream, notTheDocument } from '../documents.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Creates the PII redaction translator for one request. */
export function createNativeJsonToPiiRedaction(_clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  let clientName: string | undefined;
  return {
    request(_body, _offering, files) {
      const document = documentPart(files);
      clientName = document.filename;
      return new RawBody(document.data, 'application/pdf');
    },
    query: (body): Record<string, string[]> => (typeof body.language === 'string' ? { language: [body.language] } : {}),
    response: noJson,
    file(data) {
      if (!looksLikePdf(data)) throw notTheDocument('a PDF');
      return { data, contentType: 'application/pdf', filename: downloadName(clientName, 'redacted', 'pdf') };
    },
    stream: noStream,
    error: mapUpstreamError,
  };
}
