/**
 * The Gemini routes of the simulator: `POST .../models/{model}:generateContent` and
 * `:streamGenerateContent` under both path forms the vendor serves them: Google AI Studio's
 * `/v1beta/models/{model}` (the key in `x-goog-api-key`, or `?key=`; an empty one is refused, a missing
 * one accepted) and Vertex AI's `/v1/projects/{project}/locations/{location}/publishers/google/models/{model}`
 * (an OAuth access token as `Authorization: Bearer`; any token is accepted until the simulator issues
 * its own, none is a 401). A stream is
 * server-sent events with `?alt=sse`, else one JSON array of the chunks, as the vendor answers.
 * Errors are Google's RPC status shape `{error: {code, message, status}}`. Faults scope by the model
 * of the path (`POST /__sim/faults {model: "gemini-2.5-flash"}`).
 */
import type http from 'node:http';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange, SimRoute } from './exchange.js';
import type { SimFault } from './faults.js';
import { answerGemini, geminiEvent, geminiResponseBody, geminiStreamChunks, validateGeminiRequest } from './gemini.js';

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

/** A Google RPC status error body. */
export function googleError(code: number, message: string): Record<string, unknown> {
  return { error: { code, message, status: STATUS_NAMES[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } };
}

/** The vendor's own messages for fault `error_code`. */
const CODE_MESSAGES = {
  context_length_exceeded: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).',
  content_policy_violation: 'The request was blocked by the safety system (simulated).',
} as const;

function faultResponse(status: number, _raw: string, fault: SimFault): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const headers: http.OutgoingHttpHeaders = status === 429 ? { 'retry-after': '7' } : {};
  if (fault.error_code) return { body: googleError(400, CODE_MESSAGES[fault.error_code]), headers };
  const message = status === 429 ? 'Resource has been exhausted (e.g. check quota) (simulated).' : `Simulated error (status ${status}).`;
  return { body: googleError(status, message), headers };
}

/** The error event a broken stream ends with, and the malformed chunk of fault malformed_after_chunks. */
const STREAM_ERROR = geminiEvent(googleError(500, 'An internal error has occurred (simulated).'));
const MALFORMED = 'data: {"candidates": [{"content": oops\r\n\r\n';

/** How a request authenticates, by its path form. */
type PathForm = 'ai-studio' | 'vertex';

const AI_STUDIO = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const VERTEX = /^\/v1(?:beta1)?\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/**
 * False (after answering as the vendor does) when the credential is wrong for the path form. Vertex
 * takes only a bearer token (any, until the simulator issues its own): none is a 401. AI Studio's key
 * is accepted when absent (the gateway sends none to the simulator, as for every keyless provider)
 * and refused when empty, the vendor's 400 API_KEY_INVALID.
 */
function authorized(x: Exchange, form: PathForm, url: URL): boolean {
  if (form === 'vertex') {
    if (/^bearer\s+\S+/i.test(x.headers.authorization ?? '')) return true;
    x.sendJson(401, googleError(401, 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential (simulated).'));
    return false;
  }
  const key = x.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined;
  if (key === undefined || String(key).trim() !== '') return true;
  x.sendJson(400, googleError(400, 'API key not valid. Please pass a valid API key.'));
  return false;
}

function geminiRoute(model: string, stream: boolean, form: PathForm, url: URL): SimRoute {
  return {
    faultResponse,
    async handle(x) {
      if (!authorized(x, form, url)) return;
      if (!x.parsed) return x.sendJson(400, googleError(400, 'Invalid JSON payload received.'));
      const valid = validateGeminiRequest(x.body);
      if (!valid.ok) return x.sendJson(400, googleError(400, valid.message));
      const answer = answerGemini(valid.value, model, x.raw, x.fault.answer_words);
      const omitUsage = x.fault.omit_usage === true;
      if (!stream) return x.sendJson(200, geminiResponseBody(answer, omitUsage));
      const chunks = geminiStreamChunks(answer, omitUsage);
      if (url.searchParams.get('alt') !== 'sse') return x.sendJson(200, chunks);
      await x.stream(chunks.map(geminiEvent), { error: () => STREAM_ERROR, finalEvent: true, malformed: MALFORMED });
    },
  };
}

/** The Gemini route for a request, by method and URL (both path forms); the fault key is the path's model. */
export function matchGemini(method: string, url: URL): SimMatch | undefined {
  if (method !== 'POST') return undefined;
  const studio = AI_STUDIO.exec(url.pathname);
  const vertex = studio ? null : VERTEX.exec(url.pathname);
  const found = studio ?? vertex;
  if (!found) return undefined;
  const model = decodeURIComponent(found[1]!);
  return { route: geminiRoute(model, found[2] === 'streamGenerateContent', studio ? 'ai-studio' : 'vertex', url), faultKey: model };
}
