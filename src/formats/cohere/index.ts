/**
 * Cohere's client format (issue 31 item 11): the gateway's `POST /v2/rerank` and `POST /v2/embed`
 * answer as Cohere's v2 API does (../shared/specs/cohere), so `CohereClientV2` works with only its
 * environment changed. Errors are Cohere's `{message}` (every error response of Cohere's spec is
 * `{id, message}`; its SDKs read `message`), plus the spec's stable `code` (spec 7) for machines.
 * JSON in and out, no streaming, no token sizing (the routes meter quantities).
 */
import type { GatewayError } from '../../errors.js';
import { formatSse } from '../../translate/sse.js';
import type { ClientFormat } from '../types.js';

function errorBody(error: GatewayError): Record<string, unknown> {
  return { message: error.message, code: error.code };
}

/** The cohere client format. */
export const cohereFormat: ClientFormat = {
  id: 'cohere',
  errorBody,
  // Nothing streams on these routes; an error after the head is still the error body.
  streamErrorFrame: (error) => formatSse(JSON.stringify(errorBody(error))),
  streamDoneFrame: null,
  betaHeader: null,
  tokens: null,
  // Cohere's answers say their billed units in `meta.billed_units`; the charge is X-Gateway-Cost-USD.
  usageCost: null,
};
