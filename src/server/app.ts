/**
 * The HTTP server: fastify with one catch-all entry into the generic pipeline (routes come from the
 * current generation, so hot reload can add, change or remove routes), plus the gateway's own
 * endpoints: the public catalogue, the OpenAPI document, liveness and readiness, and the admin API.
 */
import { readFile } from 'node:fs/promises';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { registerAdminRoutes } from '../admin/routes.js';
import type { AlertOutbox } from '../alerts/outbox.js';
import { GatewayError } from '../errors.js';
import { DEFAULT_CLIENT_FORMAT, clientFormat } from '../formats/index.js';
import { newRequestId, runPipeline } from '../pipeline/index.js';
import type { ClientFormat } from '../formats/types.js';
import type { Runtime } from '../pipeline/stage.js';
import { registerMetricsRoute, type GatewayMetrics } from '../observability/metrics.js';
import { catalogBody } from './catalog.js';
import type { Generation } from './generation.js';
import type { Readiness } from './readiness.js';
import type { Jobs } from '../jobs/scheduler.js';
import { registerBlobRoutes } from './blob-routes.js';
import { registerConsole, type ConsoleDeps } from '../console/routes.js';
import type { MailTransport } from '../console/mail.js';

/** What the server needs: the current generation (swappable) and the long-lived services. */
export interface ServerDeps {
  runtime: Runtime;
  generation(): Generation;
  adminToken: string | null;
  /** Scheduled jobs, runnable by name through the admin API. */
  jobs?: Jobs;
  openapiFile: string;
  bodyLimitBytes: number;
  metrics: GatewayMetrics;
  /** Bearer token for GET /metrics; null leaves it open. */
  metricsToken: string | null;
  log: (message: string, error?: unknown) => void;
  /** GET /readyz: the store, the limiter backend and the configuration. */
  readiness: () => Promise<Readiness>;
  /** The account console at /console (issue 13); absent: no console. */
  console?: ConsoleDeps;
  /** Outgoing mail; its outbox (development) is GET /admin/outbox. */
  mail?: MailTransport;
  /** The alerts' outbox (issue 33 item 3): accounts' own low-balance thresholds are set through it. */
  alerts?: AlertOutbox;
}

/** A request's route in the generation current when it arrived; null when no route matches. */
interface RouteMatch {
  generation: Generation;
  found: ReturnType<Generation['match']>;
}

const MATCH = Symbol('routeMatch');

type Carrier = FastifyRequest & { [MATCH]?: RouteMatch };

function matchNow(deps: ServerDeps, req: FastifyRequest): RouteMatch {
  const generation = deps.generation();
  return { generation, found: generation.match(req.method, req.url.split('?')[0]!) };
}

/**
 * The request's route as a body parser sees it, kept on the request so that dispatch runs the same
 * route in the same generation, even when a hot reload swaps it in between. (A JSON body that parses
 * asks nothing, so the usual request carries no extra property.)
 */
function rememberMatch(deps: ServerDeps, req: FastifyRequest): RouteMatch {
  const carrier = req as Carrier;
  return (carrier[MATCH] ??= matchNow(deps, req));
}

/** The request's route: the one a body parser saw, else matched now. */
function matchOf(deps: ServerDeps, req: FastifyRequest): RouteMatch {
  return (req as Carrier)[MATCH] ?? matchNow(deps, req);
}

function errorFormatFor(deps: ServerDeps, req: FastifyRequest): ClientFormat {
  const { found } = matchOf(deps, req);
  return found ? clientFormat(found.pipeline.route.manifest.format) : DEFAULT_CLIENT_FORMAT;
}

function bodyError(error: FastifyError): GatewayError {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new GatewayError('payload_too_large', 'The request body is too large.');
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new GatewayError('invalid_request', 'Unsupported Content-Type; send application/json.');
  if (error.statusCode && error.statusCode < 500) return new GatewayError('invalid_json', 'The request body is not valid JSON.');
  return new GatewayError('internal_error', 'The gateway failed to process the request.');
}

/** The error fastify raises for a type no parser takes (answered as a 400 by bodyError: spec 7 has no 415). */
function unsupportedMediaType(): Error {
  return Object.assign(new Error('Unsupported Content-Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 });
}

async function dispatch(deps: ServerDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { generation, found } = matchOf(deps, req);
  if (!found) {
    const error = new GatewayError('not_found', `No route for ${req.method} ${req.url.split('?')[0]}.`);
    await reply.code(404).send(DEFAULT_CLIENT_FORMAT.errorBody(error));
    return;
  }
  await runPipeline(found.pipeline, generation.gateway, deps.runtime, req, reply, found.params, (e) => deps.log('request failed', e));
}

/** Builds the fastify app (not yet listening). */
export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  // 'idle': closing ends idle keep-alive connections only; requests and streams in flight drain.
  const app = Fastify({
    logger: false, bodyLimit: deps.bodyLimitBytes, return503OnClosing: true, forceCloseConnections: 'idle',
    // Every answer, including the ones refused before routing, carries its request id.
    genReqId: newRequestId,
    // Errors fastify raises before routing (a malformed URL) still answer in the gateway's error shape.
    frameworkErrors: (error, req, reply: FastifyReply) => {
      void reply.header('x-request-id', req.id).code(400).send(DEFAULT_CLIENT_FORMAT.errorBody(new GatewayError('invalid_request', `Malformed request: ${error.message}`)));
    },
  });
  app.setErrorHandler(async (error: FastifyError, req, reply) => {
    const gatewayError = bodyError(error);
    if (gatewayError.status >= 500) deps.log('unhandled error', error);
    await reply.code(gatewayError.status).send(errorFormatFor(deps, req).errorBody(gatewayError));
  });
  app.addHook('onRequest', (req, reply, done) => { reply.header('x-request-id', req.id); done(); });
  // A POST without a payload (finalize, a job run) may still say application/json: an empty body is no body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') { done(null, undefined); return; }
    parseJson(req, body as string, (error, parsed) => {
      // A raw body route refuses the type itself, naming the types it takes, rather than "not valid JSON".
      if (error && rememberMatch(deps, req).found?.pipeline.route.raw) { done(null, undefined); return; }
      done(error, parsed);
    });
  });
  // A multipart body is read by the route that declares one, as a stream under its own limits
  // (src/bodies/multipart.ts); a raw body route gets the stream too, and names the types it
  // takes (src/bodies/raw.ts); any other route refuses it as it refuses every non-JSON type.
  app.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    const route = rememberMatch(deps, req).found?.pipeline.route;
    if (route?.multipart || route?.raw) { done(null, payload); return; }
    done(unsupportedMediaType(), undefined);
  });
  // text/plain is no JSON route's type: like any other it reaches a raw body route as bytes (a route may
  // take text, as CSV or Markdown are uploaded, spec 4.5 rule 2) and is refused elsewhere, rather than
  // read into a string by fastify's own parser.
  app.removeContentTypeParser('text/plain');
  // Any other type (or none) is a raw body route's bytes, read as a stream under its own bound and
  // checked against its allow-list by the validate stage; every other route refuses it.
  app.addContentTypeParser('*', (req, payload, done) => {
    if (rememberMatch(deps, req).found?.pipeline.route.raw) { done(null, payload); return; }
    done(unsupportedMediaType(), undefined);
  });
  const openapi = await readFile(deps.openapiFile, 'utf8');
  app.get('/openapi.json', async (_req, reply) => reply.type('application/json').send(openapi));
  app.get('/api/public/catalog', async () => catalogBody(deps.generation().gateway));
  // Liveness (the process answers) and readiness (its dependencies answer); neither needs a key.
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const ready = await deps.readiness();
    return reply.code(ready.status === 'ok' ? 200 : 503).header('cache-control', 'no-store').send(ready);
  });
  registerMetricsRoute(app, deps.metrics, deps.metricsToken);
  if (deps.adminToken) registerAdminRoutes(app, {
    ledger: deps.runtime.ledger, auth: deps.runtime.auth, token: deps.adminToken, jobs: deps.jobs, mail: deps.mail, alerts: deps.alerts, clock: deps.runtime.clock,
    deployments: { gateway: () => deps.generation().gateway, health: deps.runtime.deployments },
  });
  if (deps.console) registerConsole(app, deps.console);
  registerBlobRoutes(app, () => deps.runtime.files, deps.log);
  app.route({ method: ['GET', 'POST', 'DELETE', 'PATCH', 'PUT'], url: '/*', handler: (req, reply) => dispatch(deps, req, reply) });
  return app;
}
