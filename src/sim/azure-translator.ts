/**
 * Azure Translator v3 text translation in the simulator (docs/vendors/native-ops.md, spec
 * `shared/specs/azure/translator-text/TextTranslation-3.0.openapi.json`):
 * `POST /translate?api-version=3.0&to=de&to=it[&from=en]` with body `[{"text": "..."}]` (also served
 * under `/translator/text/v3.0/translate`, the path on a custom-domain resource endpoint). Each input
 * gets `{detectedLanguage?, translations[{text: "[<to>] <input>", to}]}`; `detectedLanguage` only when
 * `from` is absent. The characters charged are in the `x-metered-usage` header: Microsoft counts every
 * Unicode code point, surrogate pairs as two, i.e. UTF-16 code units, times the number of target
 * languages. Errors are Translator-shaped: `{error: {code: <6-digit int>, message}}`.
 */
import type http from 'node:http';
import { detectLanguage } from './azure-language.js';
import type { SimMatch } from './azure-content-safety.js';
import { bodyHash, isRecord } from './text.js';
import { sendJsonAnswer, seededUuid } from './native.js';
import type { Exchange } from './exchange.js';

export const TRANSLATOR_API_VERSION = '3.0';
/** The global endpoint's path and the custom-domain resource endpoint's path. */
export const TRANSLATOR_PATHS = ['/translate', '/translator/text/v3.0/translate'] as const;
/** Request limits (Microsoft's "request limits" page, not the spec): array elements, and characters across all target languages. */
export const MAX_TRANSLATE_ELEMENTS = 1000;
export const MAX_TRANSLATE_CHARACTERS = 50_000;

/** A language code as the service takes it (`de`, `zh-Hans`, `sr-Cyrl`, `fr-CA`): one code per `to` value, never a list. */
const LANGUAGE_CODE = /^[a-z]{2,3}(-[A-Za-z]{2,4})?$/;

/** Characters Translator charges for a text: UTF-16 code units (code points, a surrogate pair counting two). */
export const translatorCharacters = (text: string): number => text.length;

/** A Translator error body `{error: {code, message}}`. */
export const translatorError = (code: number, message: string) => ({ error: { code, message } });

const FAULT_MESSAGES: Record<number, string> = {
  400: 'One of the request inputs is not valid.',
  401: 'The request is not authorized because credentials are missing or invalid.',
  403: 'The operation is not allowed.',
  429: 'The server rejected the request because the client has exceeded request limits.',
  500: 'An unexpected error occurred.',
  503: 'Server temporarily unavailable.',
};

/** The Translator-shaped body for a fault status: code = status x 1000 (429000, 500000, ...). */
export function translatorFaultResponse(status: number, raw: string): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const message = `${FAULT_MESSAGES[status] ?? `Simulated error (status ${status}).`} (simulated)`;
  const headers: http.OutgoingHttpHeaders = { 'x-requestid': seededUuid(`translator-error:${raw}`), ...(status === 429 ? { 'retry-after': '7' } : {}) };
  return { body: translatorError(status * 1000, message), headers };
}

async function translate(x: Exchange, url: URL): Promise<void> {
  const fail = (code: number, message: string) => x.sendJson(Math.floor(code / 1000), translatorError(code, message));
  const versions = url.searchParams.getAll('api-version');
  if (versions.length !== 1 || versions[0] !== TRANSLATOR_API_VERSION) return fail(400021, 'The API version parameter is missing or invalid.');
  const to = url.searchParams.getAll('to');
  if (to.length === 0 || !to.every((t) => LANGUAGE_CODE.test(t))) {
    return fail(400036, 'The target language is not valid (repeat the parameter for each language: to=de&to=it).');
  }
  const froms = url.searchParams.getAll('from');
  if (froms.length > 1 || (froms.length === 1 && !LANGUAGE_CODE.test(froms[0]!))) return fail(400035, 'The source language is not valid.');
  const textType = url.searchParams.get('textType');
  if (textType !== null && textType !== 'Plain' && textType !== 'Html') return fail(400000, 'One of the request inputs is not valid: textType must be Plain or Html.');
  if (!x.parsed) return fail(400074, 'The body of the request is not valid JSON.');
  const items = x.body;
  if (!Array.isArray(items) || items.length === 0) return fail(400000, 'One of the request inputs is not valid: the body must be a non-empty array of {"text": "..."}.');
  if (items.length > MAX_TRANSLATE_ELEMENTS) return fail(400077, `The maximum request size has been exceeded: ${items.length} elements, at most ${MAX_TRANSLATE_ELEMENTS}.`);
  const texts: string[] = [];
  for (const [i, item] of items.entries()) {
    if (!isRecord(item) || typeof item.text !== 'string' || Object.keys(item).length !== 1) {
      return fail(400000, `One of the request inputs is not valid: element ${i} must be {"text": string} (the spec's property is lower-case "text"; it defines no other).`);
    }
    texts.push(item.text);
  }
  const perTarget = texts.reduce((sum, t) => sum + translatorCharacters(t), 0);
  const charged = perTarget * to.length;
  if (charged > MAX_TRANSLATE_CHARACTERS) {
    return fail(400077, `The maximum request size has been exceeded: ${charged} characters across ${to.length} target languages, at most ${MAX_TRANSLATE_CHARACTERS}.`);
  }
  const from = froms[0];
  const answer = texts.map((text) => ({
    ...(from === undefined ? { detectedLanguage: { language: detectLanguage(text).iso6391Name, score: 1.0 } } : {}),
    translations: to.map((lang) => ({ text: text === '' ? '' : `[${lang}] ${text}`, to: lang })),
  }));
  const headers: http.OutgoingHttpHeaders = {
    'x-requestid': seededUuid(`translator:${url.search}:${bodyHash(x.raw)}`),
    'x-mt-system': to.map(() => 'Team').join(','),
  };
  if (x.fault.omit_usage !== true) headers['x-metered-usage'] = String(charged);
  await sendJsonAnswer(x, answer, headers);
}

/** `POST /translate?api-version=3.0&to=...` (and its custom-domain path) for a given URL. */
export function matchTranslator(method: string, url: URL): SimMatch | undefined {
  if (method !== 'POST' || !(TRANSLATOR_PATHS as readonly string[]).includes(url.pathname)) return undefined;
  return { faultKey: 'azure-translator', route: { faultResponse: translatorFaultResponse, handle: (x) => translate(x, url) } };
}
