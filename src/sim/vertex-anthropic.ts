/**
 * Claude on Vertex AI in the simulator (issue 32 item 3): `POST /v1/projects/{project}/locations/
 * {location}/publishers/anthropic/models/{model}:rawPredict` (JSON) and `:streamRawPredict` (server-sent
 * events), behind a bearer token of the simulated token endpoint (google-oauth.ts). Vertex's dialect
 * of the messages format is checked strictly (the body carries `anthropic_version: vertex-2023-10-16`
 * and no `model`, which is the URL's; `stream` matches the method), then the request is answered by the
 * messages simulator as Anthropic's API would answer it. Faults scope by the URL's model.
 */
import type { RawRequest } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange, SimRoute } from './exchange.js';
import { googleError, type SimServiceAccounts } from './google-oauth.js';

/** The body field and value of Vertex's messages dialect. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const PATH = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

type Json = Record<string, unknown>;

/** Why a Vertex body is not in the dialect, or null. */
function dialectError(body: unknown, streaming: boolean): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Invalid JSON payload received.';
  const b = body as Json;
  if (b.anthropic_version !== VERTEX_ANTHROPIC_VERSION) return `anthropic_version: must be "${VERTEX_ANTHROPIC_VERSION}"`;
  if (b.model !== undefined) return 'model: the model is named by the URL, not the body';
  if ((b.stream === true) !== streaming) return streaming ? 'streamRawPredict needs "stream": true' : 'rawPredict does not stream: use streamRawPredict';
  return null;
}

/** The matcher of the Vertex Claude routes, answering through `messages` (the simulator's messages route). */
export function matchVertexAnthropic(messages: SimRoute, accounts: SimServiceAccounts): (method: string, url: URL, raw: RawRequest) => SimMatch | undefined {
  return (method, url) => {
    const m = method === 'POST' ? PATH.exec(url.pathname) : null;
    if (!m) return undefined;
    const model = decodeURIComponent(m[1]!);
    const streaming = m[2] === 'streamRawPredict';
    const route: SimRoute = {
      faultResponse: messages.faultResponse,
      prefill: true,
      async handle(x: Exchange) {
        if (!accounts.bearer(x.headers)) {
          return x.sendJson(401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.'));
        }
        const wrong = dialectError(x.body, streaming);
        if (wrong) return x.sendJson(400, googleError(400, 'INVALID_ARGUMENT', wrong));
        const { anthropic_version: _version, ...rest } = x.body as Json;
        const body = { ...rest, model };
        const raw = JSON.stringify(body);
        // Answered as the messages API answers (its own checks and answers), the version Vertex implies.
        await messages.handle({ ...x, headers: { ...x.headers, 'anthropic-version': '2023-06-01' }, body, raw, parsed: true });
      },
    };
    return { route, faultKey: model };
  };
}
