/**
 * Azure AI Content Safety in the simulator (docs/vendors/native-ops.md, spec
 * `shared/specs/azure/content-safety/contentsafety.json`, api-version 2024-09-01):
 * `POST /contentsafety/text:analyze?api-version=2024-09-01` answers `categoriesAnalysis[{category, severity}]`
 * with severities derived from trigger words, so answers vary with the text. The service reports no
 * billed quantity (the gateway bills one record per call).
 *
 * Also what the Azure routes share: the Azure.Core error body `{error: {code, message, innererror?}}`
 * with its `x-ms-error-code` header, fault bodies in that shape, the `api-version` check, and `SimMatch`,
 * the result of a URL matcher (Azure routes need the query string or a path parameter, so server.ts
 * matches them by method and URL; `faultKey` scopes faults: `POST /__sim/faults {model: "<faultKey>"}`).
 */
import type http from 'node:http';
import { sendJsonAnswer, unknownKey } from './native.js';
import type { Exchange, SimRoute } from './exchange.js';
import { isRecord, type Rec } from './text.js';

// ---------------------------------------------------------------------------------------------------
// Shared by the Azure routes

/** A matched native route and the name faults are scoped by (Azure bodies carry no `model`). */
export interface SimMatch { route: SimRoute; faultKey: string }

/** The Azure.Core error body (`Azure.Core.Foundations.ErrorResponse`). */
export function azureError(code: string, message: string, inner?: { code: string; message: string }): Rec {
  return { error: { code, message, ...(inner ? { innererror: inner } : {}) } };
}

/** Sends an Azure.Core error with its `x-ms-error-code` header. */
export function sendAzureError(x: Exchange, status: number, code: string, message: string, inner?: { code: string; message: string }): void {
  x.sendJson(status, azureError(code, message, inner), { 'x-ms-error-code': code });
}

const FAULT_CODES: Record<number, string> = {
  400: 'InvalidRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
  429: 'TooManyRequests', 500: 'InternalServerError', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/** The Azure.Core-shaped body and headers for a fault status (429 carries retry-after: 7). */
export function azureFaultResponse(status: number): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const code = FAULT_CODES[status] ?? (status >= 500 ? 'InternalServerError' : 'InvalidRequest');
  const headers: http.OutgoingHttpHeaders = { 'x-ms-error-code': code, ...(status === 429 ? { 'retry-after': '7' } : {}) };
  return { body: azureError(code, `Simulated error (status ${status}).`), headers };
}

/**
 * False (after answering 404 `Resource not found`, as Azure does for an api-version it does not serve)
 * unless the query names exactly `version`.
 */
export function checkApiVersion(x: Exchange, url: URL, version: string): boolean {
  const got = url.searchParams.getAll('api-version');
  if (got.length === 1 && got[0] === version) return true;
  const said = got.length === 0 ? 'missing' : got.join(',');
  sendAzureError(x, 404, '404', `Resource not found (api-version ${said}; the simulator serves ${version}).`);
  return false;
}

/** The 400 for a body that is not JSON. */
export const invalidJson = (x: Exchange) => sendAzureError(x, 400, 'InvalidRequestBody', 'The request body is not valid JSON.');

// ---------------------------------------------------------------------------------------------------
// POST /contentsafety/text:analyze

export const CONTENT_SAFETY_API_VERSION = '2024-09-01';
export const CONTENT_SAFETY_PATH = '/contentsafety/text:analyze';
export const TEXT_CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;
/** `text` limit of the spec: 10,000 Unicode code points (`maxLength: 10000`). */
export const MAX_TEXT_CODE_POINTS = 10_000;
const FIELDS = ['text', 'categories', 'blocklistNames', 'haltOnBlocklistHit', 'outputType'] as const;

type TextCategory = (typeof TEXT_CATEGORIES)[number];

/** Words that raise a category's severity (each occurrence one step). */
const TRIGGERS: Record<TextCategory, RegExp> = {
  Hate: /\b(hate|hateful|bigot\w*)\b/giu,
  SelfHarm: /\b(self-harm|suicide|hurt myself)\b/giu,
  Sexual: /\b(sexual|explicit|nsfw)\b/giu,
  Violence: /\b(kill|attack|violence|violent|weapon)\b/giu,
};

/** Severity of `category` in `text`: 0 without trigger words; EightSeverityLevels 0..7, FourSeverityLevels 0, 2, 4, 6. */
export function severity(text: string, category: TextCategory, eight: boolean): number {
  const hits = text.match(TRIGGERS[category])?.length ?? 0;
  const level = Math.min(7, hits * 2);
  return eight ? level : Math.min(6, 2 * Math.floor(level / 2));
}

async function analyzeText(x: Exchange): Promise<void> {
  const body = x.body;
  const fail = (message: string) => sendAzureError(x, 400, 'InvalidRequestBody', message);
  if (!isRecord(body)) return fail('The request body must be a JSON object.');
  const extra = unknownKey(body, FIELDS);
  if (extra !== undefined) return fail(`Unknown field '${extra}' (the simulator rejects fields the spec does not define).`);
  if (typeof body.text !== 'string') return fail("The field 'text' is required and must be a string.");
  const length = Array.from(body.text).length;
  if (length > MAX_TEXT_CODE_POINTS) return fail(`The text is ${length} characters long; the limit is ${MAX_TEXT_CODE_POINTS} characters (Unicode code points).`);
  const categories = body.categories ?? [...TEXT_CATEGORIES];
  if (!Array.isArray(categories) || !categories.every((c) => (TEXT_CATEGORIES as readonly unknown[]).includes(c))) {
    return fail(`'categories' must be an array of ${TEXT_CATEGORIES.join(', ')}.`);
  }
  const outputType = body.outputType ?? 'FourSeverityLevels';
  if (outputType !== 'FourSeverityLevels' && outputType !== 'EightSeverityLevels') return fail("'outputType' must be FourSeverityLevels or EightSeverityLevels.");
  if (body.blocklistNames !== undefined && !(Array.isArray(body.blocklistNames) && body.blocklistNames.every((n) => typeof n === 'string'))) {
    return fail("'blocklistNames' must be an array of strings.");
  }
  if (body.haltOnBlocklistHit !== undefined && typeof body.haltOnBlocklistHit !== 'boolean') return fail("'haltOnBlocklistHit' must be a boolean.");
  const text = body.text;
  const answer: Rec = {
    categoriesAnalysis: (categories as TextCategory[]).map((category) => ({ category, severity: severity(text, category, outputType === 'EightSeverityLevels') })),
  };
  if (body.blocklistNames !== undefined) answer.blocklistsMatch = [];
  await sendJsonAnswer(x, answer);
}

/** `POST /contentsafety/text:analyze?api-version=2024-09-01` for a given URL. */
export function matchContentSafety(method: string, url: URL): SimMatch | undefined {
  if (method !== 'POST' || url.pathname !== CONTENT_SAFETY_PATH) return undefined;
  return {
    faultKey: 'azure-content-safety',
    route: {
      faultResponse: azureFaultResponse,
      async handle(x) {
        if (!checkApiVersion(x, url, CONTENT_SAFETY_API_VERSION)) return;
        if (!x.parsed) return invalidJson(x);
        await analyzeText(x);
      },
    },
  };
}
