/**
 * A deterministic upstream on plain node:http speaking three wire formats: OpenAI chat completions
 * (POST /v1/chat/completions, chat.ts), OpenAI responses (POST /v1/responses, responses.ts) and
 * Anthropic messages (POST /v1/messages and /v1/messages/count_tokens, messages.ts); plus
 * GET /v1/models and the control API under /__sim/ (faults, last request, request log, stats, reset).
 * Every format takes the same faults (faults.ts); exchange.ts applies the stream-level ones.
 *
 * And the native vendor operations (docs/vendors/native-ops.md): Cohere POST /v2/embed and /v2/rerank
 * (cohere.ts), found by path like the above; Azure Content Safety POST /contentsafety/text:analyze
 * (azure-content-safety.ts), Azure Translator POST /translate (azure-translator.ts) and Azure Language
 * POST /language/:analyze-text, POST /language/analyze-text/jobs and GET .../jobs/{id}
 * (azure-language.ts), found by method and URL (they read the query string or a path parameter). Azure
 * bodies carry no `model`: faults scope to them by the names azure-content-safety, azure-translator and
 * azure-language. On these JSON answers truncate_after_chunks / error_after_chunks / chunk_delay_ms cut
 * or slow the body (cohere.ts sendJsonAnswer) and omit_usage drops the billed quantity. Azure Content
 * Safety also answers POST /contentsafety/image:analyze (azure-content-safety.ts).
 *
 * And the Anthropic Files API and skills (docs/vendors/anthropic-files.md): POST /v1/files (multipart,
 * read as bytes up to 500 MB, not as text), GET /v1/files, GET and DELETE /v1/files/{id},
 * GET /v1/files/{id}/content (bytes) in anthropic-files.ts over one in-memory store; GET /v1/skills and
 * POST /v1/messages with a `container` naming skills (anthropic-skills.ts), whose generated documents
 * land in that store. Matched by method and URL; faults scope by the names anthropic-files and
 * anthropic-skills (a skills message by its model). POST /__sim/reset forgets the files.
 *
 * And OpenAI speech to text (spec 4.8): POST /v1/audio/transcriptions and /v1/audio/translations
 * (multipart, read as bytes; openai-audio.ts), faults keyed by the form's `model`; text to speech,
 * POST /v1/audio/speech (openai-speech.ts), faults keyed by the body's `model`.
 *
 * And OpenAI image generation (spec 4.14): POST /v1/images/generations and the PNGs its dall-e-3 URLs
 * point at, GET /v1/sim-images/<seed>.png (openai-images.ts); image edits, POST /v1/images/edits
 * (openai-image-edits.ts).
 *
 * And Black Forest Labs' flex image model (spec 4.14): POST /v1/flux-2-flex, GET /v1/get_result and
 * the delivered images, GET /v1/sim-bfl/<id>.<png|jpeg> (bfl.ts); faults scope by bfl, bfl-result, bfl-delivery.
 *
 * And Azure Document Intelligence (spec 4.12): POST /documentintelligence/documentModels/{prebuilt-read|
 * prebuilt-layout}:analyze and GET .../analyzeResults/{resultId}, polled (azure-document-intelligence.ts);
 * faults scope by azure-document-intelligence.
 *
 * And Azure AI Vision image analysis 4.0 (spec 4.12): POST /computervision/imageanalysis:analyze with
 * the image as raw bytes (azure-image-analysis.ts); faults scope by azure-image-analysis.
 *
 * And document translation and PII redaction (spec 4.9): Azure Document Translation's synchronous
 * POST /translator/document:translate (multipart with a DOCX `document` part; azure-document-translation.ts)
 * and the PII redaction contract POST /pii/v1/documents:redact-pdf (a raw PDF; pii-redaction.ts), both
 * answering the document's bytes; faults scope by azure-document-translation and pii-redaction.
 *
 * And Gemini generateContent (docs/vendors/gemini.md): POST .../models/{model}:generateContent and
 * :streamGenerateContent (?alt=sse) under AI Studio's /v1beta and Vertex AI's /v1/projects/.../publishers/google
 * path forms (gemini-route.ts); faults scope by the model of the path.
 *
 * And Google Vertex AI (issue 32 item 3): the OAuth token endpoint of service accounts, POST /token
 * (google-oauth.ts; accounts registered with POST /__sim/google/accounts, faults scope by
 * google-oauth-token), and Claude on Vertex, POST /v1/projects/{project}/locations/{location}/
 * publishers/anthropic/models/{model}:rawPredict and :streamRawPredict (vertex-anthropic.ts), behind its tokens.
 *
 * And AWS Bedrock (issue 32 item 2): POST /model/{modelId}/converse and /converse-stream (bedrock.ts),
 * the stream as AWS event-stream frames, every request's SigV4 signature checked (bedrock-auth.ts);
 * faults scope by the model id.
 */
import http from 'node:http';
import { createFilesRoutes, SimFileStore, uploadBodyLimit, uploadTooLarge, type RawRequest } from './anthropic-files.js';
import { createSkillsRoutes } from './anthropic-skills.js';
import { matchContentSafety, type SimMatch } from './azure-content-safety.js';
import { matchImageAnalysis } from './azure-image-analysis.js';
import { matchDocumentTranslation } from './azure-document-translation.js';
import { matchPiiRedaction } from './pii-redaction.js';
import { createDocumentIntelligenceRoutes } from './azure-document-intelligence.js';
import { createLanguageRoutes } from './azure-language.js';
import { matchTranslator } from './azure-translator.js';
import { cohereEmbedRoute, cohereRerankRoute } from './cohere.js';
import { createBflRoutes } from './bfl.js';
import { createBedrockRoutes } from './bedrock.js';
import { matchElevenLabs } from './elevenlabs.js';
import { matchGemini } from './gemini-route.js';
import { writeEvents, type Exchange, type SimRoute } from './exchange.js';
import { FaultStore, parseFaultBody, retryHeaders, type SimFault } from './faults.js';
import { createMessagesRoutes } from './messages-route.js';
import { SimServiceAccounts } from './google-oauth.js';
import { matchVertexAnthropic } from './vertex-anthropic.js';
import { embeddingsRoute } from './openai-embeddings.js';
import { moderationsRoute } from './openai-moderations.js';
import { imagesRoute, matchSimImages } from './openai-images.js';
import { matchOpenaiVideos } from './openai-videos.js';
import { matchOpenaiAudio } from './openai-audio.js';
import { matchOpenaiSpeech } from './openai-speech.js';
import { matchOpenaiImageEdits } from './openai-image-edits.js';
import { chatRoute, openaiError as errorBody } from './openai-route.js';
import { responsesRoute } from './responses-route.js';
import { SimResponseStore } from './responses-store.js';
import { lastMessageRole, RequestLog, requestCredential } from './request-log.js';

export type { SimFault } from './faults.js';
export type { SimRequestRecord } from './request-log.js';

/** A running simulator. */
export interface Simulator {
  readonly port: number;
  /** Base URL without path, e.g. `http://127.0.0.1:8089`; the OpenAI base URL is `url + '/v1'`. */
  readonly url: string;
  /** Model requests (any format, count_tokens included) received since start or the last `POST /__sim/reset`. */
  readonly requests: number;
  /** TCP connections accepted since start or the last reset: shows whether clients reuse them (keep-alive). */
  readonly connections: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Options of `startSimulator`. */
export interface SimulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Fixed latency before every answer's headers (any format), for benchmarks. */
  latencyMs?: number;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * The OpenAI-compatible vendors' chat paths (issue 32 item 1): each serves chat completions under its
 * own prefix (/v1beta/openai, /openai/v1, /api/v1, the bare origin), all answered as OpenAI's.
 */
function compatibleChat(path: string): SimRoute | undefined {
  return path.endsWith('/chat/completions') ? chatRoute : undefined;
}
type Json = Record<string, unknown>;

/** Starts a simulator listening on `opts.port` (0 = random) and resolves once it accepts connections. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const faults = new FaultStore();
  const sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let requests = 0;
  let connections = 0;
  /** The last model request (`GET /__sim/last`): its path, its query string (without `?`, '' when none), headers and body. */
  let last: { path: string; query: string; headers: http.IncomingHttpHeaders; body: unknown } | null = null;
  const log = new RequestLog();
  const fileStore = new SimFileStore();
  const responseStore = new SimResponseStore();
  const skills = createSkillsRoutes(fileStore);
  const messages = createMessagesRoutes({ container: skills.container });
  const routes = new Map<string, SimRoute>([
    ['/v1/chat/completions', chatRoute], ['/v1/responses', responsesRoute(responseStore)], ['/v1/embeddings', embeddingsRoute], ['/v1/moderations', moderationsRoute],
    ['/v1/images/generations', imagesRoute],
    ['/v1/messages', messages.messages], ['/v1/messages/count_tokens', messages.countTokens],
    ['/v2/embed', cohereEmbedRoute], ['/v2/rerank', cohereRerankRoute],
  ]);
  const language = createLanguageRoutes();
  const documentIntelligence = createDocumentIntelligenceRoutes();
  const bfl = createBflRoutes();
  const bedrock = createBedrockRoutes();
  /** Native routes matched by method and URL, after `routes`. */
  const files = createFilesRoutes(fileStore);
  const google = new SimServiceAccounts();
  const matchers: Array<(method: string, url: URL, raw: RawRequest) => SimMatch | undefined> = [
    responseStore.match, matchContentSafety, matchTranslator, language.match, documentIntelligence.match, files.match, skills.match, matchElevenLabs, matchOpenaiAudio, matchOpenaiSpeech, matchSimImages, bfl.match, matchOpenaiVideos, matchOpenaiImageEdits, matchImageAnalysis, matchDocumentTranslation, matchPiiRedaction, matchGemini(google),
    google.match, matchVertexAnthropic(messages.messages, google),
    bedrock.match,
  ];
  let closing = false;

  /** Answers waiting for `POST /__sim/release` (fault hold_last_chunk). */
  const held = new Set<() => void>();
  const released = () => new Promise<void>((resolve) => { held.add(resolve); });
  const releaseAll = (): number => {
    const count = held.size;
    for (const resolve of held) resolve();
    held.clear();
    return count;
  };

  /** Sleeps `ms`; cut short when `res` closes (the client went) or the simulator closes. */
  const sleepFor = (res: http.ServerResponse, ms: number) => new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(entry.timer);
      res.off('close', finish);
      if (sleeping.delete(entry)) resolve();
    };
    const entry = { timer: setTimeout(finish, ms), resolve: finish };
    sleeping.add(entry);
    res.once('close', finish);
  });

  const server = http.createServer((req, res) => {
    let gone = false;
    const closed = new Promise<void>((resolve) => res.once('close', () => { gone = true; resolve(); }));
    res.on('error', () => { gone = true; });
    const isGone = () => gone || closing || res.destroyed || res.writableEnded;
    const sleep = (ms: number) => sleepFor(res, ms);

    /** A JSON answer; `body` undefined sends an empty body (an Azure 202). */
    const sendJson = (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
      if (isGone()) return;
      const data = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'content-length': Buffer.byteLength(data), ...headers });
      res.end(data);
    };

    /** Runs a model request: records it, applies latency and status faults, then lets the route answer. */
    const answer = async (route: SimRoute, path: string, raw: string, faultKey?: string) => {
      requests += 1;
      let body: unknown;
      let parsed = true;
      try { body = JSON.parse(raw); } catch { parsed = false; }
      last = { path, query: (req.url ?? '').replace(/^[^?]*\??/, ''), headers: req.headers, body: parsed ? body : raw };
      const record = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Json) : {};
      const model = typeof record.model === 'string' ? record.model : faultKey;
      const key = requestCredential(req.headers);
      const lastRole = lastMessageRole(record);
      log.add({ at_ms: Date.now(), path, model: model ?? null, key, stream: record.stream === true, last_role: lastRole, ...(typeof req.headers.traceparent === 'string' ? { traceparent: req.headers.traceparent } : {}) }, res);
      const fault: SimFault = faults.take({ model, key, prefill: route.prefill === true && lastRole === 'assistant' }) ?? {};
      const wait = (opts.latencyMs ?? 0) + (fault.latency_ms ?? 0);
      if (wait > 0) await sleep(wait);
      if (isGone()) return;
      if (fault.reset_before_headers) {
        req.socket.resetAndDestroy();
        return;
      }
      if (fault.status !== undefined) {
        const { body: errBody, headers } = route.faultResponse(fault.status, raw, fault);
        return sendJson(fault.status, errBody, retryHeaders(fault, headers));
      }
      const exchange: Exchange = {
        headers: req.headers, raw, body, parsed, fault, sendJson,
        stream: (events, end, headers) => writeEvents({ res, isGone, closed, sleep, released }, events, end, fault, headers),
      };
      await route.handle(exchange);
    };

    const control = (method: string, path: string, query: URLSearchParams, raw: string) => {
      let body: unknown;
      try { body = raw === '' ? undefined : JSON.parse(raw); } catch { return sendJson(400, errorBody('invalid JSON body', 'invalid_request_error')); }
      if (path === '/__sim/faults' && method === 'GET') return sendJson(200, { object: 'list', data: faults.list() });
      if (path === '/__sim/faults' && method === 'DELETE') return sendJson(200, { deleted: faults.clear() });
      if (path === '/__sim/faults' && method === 'POST') {
        const parsedFault = parseFaultBody(body);
        if (typeof parsedFault === 'string') return sendJson(400, errorBody(parsedFault, 'invalid_request_error', 'fault'));
        return sendJson(200, faults.add(parsedFault.model, parsedFault.key, parsedFault.fault));
      }
      if (path === '/__sim/requests' && method === 'GET') return sendJson(200, { object: 'list', data: log.list(query.get('model')) });
      // Lets every answer held by fault hold_last_chunk go on; says how many were waiting.
      if (path === '/__sim/release' && method === 'POST') return sendJson(200, { released: releaseAll() });
      if (path === '/__sim/google/accounts' && method === 'POST') {
        const refused = google.register(body);
        return refused ? sendJson(400, errorBody(refused, 'invalid_request_error')) : sendJson(200, { ok: true });
      }
      if (path === '/__sim/reset' && method === 'POST') {
        releaseAll();
        google.reset();
        faults.clear();
        messages.reset();
        language.reset();
        documentIntelligence.reset();
        bfl.reset();
        bedrock.reset();
        fileStore.reset();
        requests = 0;
        connections = 0;
        last = null;
        log.clear();
        return sendJson(200, { ok: true });
      }
      if (path === '/__sim/last' && method === 'GET') {
        return last ? sendJson(200, last) : sendJson(404, errorBody('no request received yet', 'invalid_request_error'));
      }
      if (path === '/__sim/stats' && method === 'GET') return sendJson(200, { requests, connections, faults: faults.list().length, sleeping: sleeping.size });
      return notFound(method, path);
    };

    const notFound = (method: string, path: string) =>
      sendJson(404, errorBody(`Unknown request URL: ${method} ${path}.`, 'invalid_request_error', null, 'unknown_url'));

    const chunks: Buffer[] = [];
    let size = 0;
    const uploadLimit = uploadBodyLimit(req.method, req.url); // a file upload: bytes, never decoded as text
    const maxBody = uploadLimit ?? MAX_BODY_BYTES;
    req.on('error', () => { gone = true; });
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBody) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > maxBody) return sendJson(413, uploadLimit === undefined ? errorBody('Request body too large.', 'invalid_request_error') : uploadTooLarge());
      const bytes = Buffer.concat(chunks);
      const raw = uploadLimit === undefined ? bytes.toString('utf8') : '';
      const rawRequest: RawRequest = { bytes, sink: { res, isGone, closed, sleep, released } };
      const method = req.method ?? 'GET';
      const path = (req.url ?? '/').split('?')[0]!;
      const route = async () => {
        const model = method === 'POST' ? routes.get(path) ?? compatibleChat(path) : undefined;
        if (model) return answer(model, path, raw);
        const url = new URL(req.url ?? '/', 'http://sim');
        for (const match of matchers) {
          const native = match(method, url, rawRequest);
          if (native) return answer(native.route, path, raw, native.faultKey);
        }
        if (path === '/v1/models' && method === 'GET') return sendJson(200, { object: 'list', data: [] });
        if (path.startsWith('/__sim/')) return control(method, path, url.searchParams, raw);
        return notFound(method, path);
      };
      route().catch((err: unknown) => {
        if (!res.headersSent) sendJson(500, errorBody(`simulator bug: ${String(err)}`, 'server_error'));
        else res.destroy();
      });
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.on('connection', () => { connections += 1; });
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => { server.off('error', reject); resolve(); });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    port,
    url: `http://${urlHost}:${port}`,
    get requests() { return requests; },
    get connections() { return connections; },
    close: () => new Promise<void>((resolve, reject) => {
      closing = true;
      for (const entry of sleeping) { clearTimeout(entry.timer); entry.resolve(); }
      sleeping.clear();
      releaseAll();
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }),
  };
}
