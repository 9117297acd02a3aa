/**
 * Stage 2, validate: the route's required headers, then the request body (JSON, a multipart form read
 * under the route's limits, or a raw body's query parameters) against the route's wire schema,
 * compiled at boot; a raw body's bytes are read after its parameters pass. A `oneOf` of single
 * required fields ("exactly one of") is answered naming the fields.
 */
import { Readable } from 'node:stream';
import type { ErrorObject } from 'ajv';
import { GatewayError } from '../../errors.js';
import { parsePointer, readPointer } from '../../meters/pointer.js';
import type { RequestContext } from '../context.js';
import type { Stage } from '../stage.js';
import { readMultipart, type MultipartSpec } from '../../bodies/multipart.js';
import { acceptedRawType, asMultipartSpec, readRawBody, unsupportedRawType, type RawBodySpec } from '../../bodies/raw.js';
import { probeFiles } from '../file-probes.js';
import { MAX_BODY_DEPTH, nestedDeeperThan } from '../depth.js';

function schemaMessage(error: ErrorObject): { message: string; param: string | null } {
  const param = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : null;
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    return { message: `Missing required parameter: '${param ? `${param}.` : ''}${missing}'.`, param: param ? `${param}.${missing}` : missing };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = String(error.params.additionalProperty);
    const named = param ? `${param}.${extra}` : extra;
    return { message: `Unknown parameter: '${named}'.`, param: named };
  }
  return { message: `Invalid '${param ?? 'body'}': ${error.message ?? 'invalid value'}.`, param };
}

/** `'a', 'b' or 'c'` (`and` for the ones a request has). */
function listed(names: string[], last: 'or' | 'and'): string {
  const quoted = names.map((n) => `'${n}'`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} ${last} ${quoted.at(-1)}`;
}

/**
 * A `oneOf` whose branches each require one field is "exactly one of these fields" (spec 4.11, 4.12:
 * one input per request): the message names the fields, and those the request has. Null for any
 * other failure, which keeps the generic message.
 */
function exactlyOneMessage(errors: ErrorObject[], schema: unknown, body: unknown): { message: string; param: string } | null {
  const error = errors.find((e) => e.keyword === 'oneOf');
  if (!error || !error.schemaPath.startsWith('#/')) return null;
  const branches = readPointer(schema, parsePointer(error.schemaPath.slice(1)));
  if (!Array.isArray(branches)) return null;
  const names = branches.map((b: { required?: unknown }) => (Array.isArray(b?.required) && b.required.length === 1 && Object.keys(b).length === 1 ? b.required[0] : null));
  if (names.length < 2 || !names.every((n): n is string => typeof n === 'string')) return null;
  const target = error.instancePath ? readPointer(body, parsePointer(error.instancePath)) : body;
  if (typeof target !== 'object' || target === null) return null;
  const prefix = error.instancePath ? `${error.instancePath.slice(1).replace(/\//g, '.')}.` : '';
  const fields = names.map((n) => prefix + n);
  const given = fields.filter((_f, i) => (target as Record<string, unknown>)[names[i]!] !== undefined);
  if (given.length === 0) return { message: `Missing input: provide exactly one of ${listed(fields, 'or')}.`, param: fields[0]! };
  if (given.length === 1) return null;
  return { message: `Provide exactly one of ${listed(fields, 'or')}; this request has ${listed(given, 'and')}.`, param: given[1]! };
}

/** Rejects a request missing a required header (e.g. the messages format's version header). */
function checkHeaders(ctx: RequestContext): void {
  for (const header of ctx.route.requiredHeaders) {
    const value = [header.name, ...header.aliases].map((n) => ctx.req.headers[n]).find((v) => typeof v === 'string');
    if (typeof value !== 'string') {
      throw new GatewayError('invalid_request', `The ${header.name} header is required (accepted: ${[...header.values].join(', ')}).`);
    }
    if (!header.values.has(value.trim())) {
      throw new GatewayError('invalid_request', `Unsupported ${header.name}: ${JSON.stringify(value)} (accepted: ${[...header.values].join(', ')}).`);
    }
  }
}

/** A JSON body of a multipart route, without the fields only a form may carry (`body.json_refuses`, spec 4.14). */
function jsonFields(body: unknown, spec: MultipartSpec): Record<string, unknown> {
  const record = body as Record<string, unknown>;
  const refused = body && typeof body === 'object' ? spec.jsonRefuses?.find((name) => Object.hasOwn(record, name)) : undefined;
  if (refused !== undefined) throw new GatewayError('unsupported_parameter', `The parameter '${refused}' is not accepted in a JSON body on this endpoint.`, { param: refused });
  return record;
}

/** Reads a multipart body under the route's limits: its files go to `ctx.files`, its text fields are the body. */
async function multipartFields(ctx: RequestContext, spec: MultipartSpec): Promise<Record<string, unknown>> {
  const stream = ctx.req.body;
  const contentType = ctx.req.headers['content-type'] ?? '';
  // `body.json`: the same route takes a JSON body too (e.g. a temporary file's id instead of the part).
  if (spec.acceptsJson && !(stream instanceof Readable) && /^application\/json\b/i.test(contentType)) return jsonFields(stream, spec);
  if (!(stream instanceof Readable) || !/^multipart\/form-data\b/i.test(contentType)) {
    throw new GatewayError('invalid_request', 'Unsupported Content-Type; send multipart/form-data.');
  }
  const { fields, files } = await readMultipart(stream, contentType, spec);
  ctx.files = files;
  return fields;
}

/**
 * Reads a raw body (issue 9 point 3) of an accepted `type` into the one file part of `ctx.files`,
 * under the route's byte bound, and measures it when the route declares a probe.
 */
function rawReader(spec: RawBodySpec): (ctx: RequestContext, type: string) => Promise<void> {
  const probes = spec.probe ? asMultipartSpec(spec) : null;
  return async (ctx, type) => {
    const stream = ctx.req.body;
    // Only the raw parsers of src/server/app.ts hand a stream over; a parsed body is a type the route refused.
    if (!(stream instanceof Readable)) throw unsupportedRawType(spec, type);
    ctx.files = [await readRawBody(stream, ctx.req.headers['content-length'], type, spec)];
    if (probes) await probeFiles(ctx, probes);
  };
}

/**
 * `query_fields` (spec 4.9: document translation's `to`, `from` and `model` ride in the query of a
 * multipart upload): those query parameters join the body before it is validated, a repeated one as
 * a list; one given in both places is refused, never silently preferred.
 */
function withQueryFields(ctx: RequestContext, body: unknown, names: readonly string[]): unknown {
  const query = (ctx.req.query ?? {}) as Record<string, unknown>;
  const present = names.filter((name) => query[name] !== undefined);
  if (present.length === 0 || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  const merged: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const name of present) {
    if (Object.hasOwn(merged, name)) throw new GatewayError('invalid_request', `'${name}' is given both in the query and in the body; send it once.`, { param: name });
    merged[name] = query[name];
  }
  return merged;
}

/** Validates the headers and bodies of routes that declare a request schema. */
export const validateStage: Stage = {
  name: 'validate',
  compile: (route) => {
    const validate = route.validateRequest;
    // A route without a body (GET, DELETE) still checks its required headers (the version header of spec 9).
    if (!validate) return route.requiredHeaders.length > 0 ? checkHeaders : null;
    const pointer = route.streamPointer;
    const accept = (ctx: RequestContext, body: unknown): void => {
      if (body === undefined) throw new GatewayError('invalid_json', 'The request body is empty; send a JSON object.');
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
      if (nestedDeeperThan(body)) throw new GatewayError('invalid_request', `The request body nests deeper than ${MAX_BODY_DEPTH} levels.`);
      if (!validate(body)) {
        const { message, param } = exactlyOneMessage(validate.errors!, validate.schema, body) ?? schemaMessage(validate.errors![0]!);
        throw new GatewayError('invalid_request', message, { param });
      }
      ctx.body = body as Record<string, unknown>;
      if (pointer) ctx.stream = readPointer(body, pointer) === true;
    };
    const multipart = route.multipart;
    const queryFields = route.manifest.query_fields;
    const fromQuery = queryFields ? (ctx: RequestContext, body: unknown): unknown => withQueryFields(ctx, body, queryFields) : (_ctx: RequestContext, body: unknown): unknown => body;
    // A raw body's parameters are all in the query: its type and parameters are checked before its bytes are read.
    const raw = route.raw;
    if (raw) {
      const read = rawReader(raw);
      return async (ctx) => {
        checkHeaders(ctx);
        const type = acceptedRawType(ctx.req.headers['content-type'], raw);
        accept(ctx, fromQuery(ctx, {}));
        await read(ctx, type);
      };
    }
    // A JSON route stays synchronous; a multipart one reads its parts first.
    if (multipart) return async (ctx) => { checkHeaders(ctx); accept(ctx, fromQuery(ctx, await multipartFields(ctx, multipart))); };
    return (ctx) => { checkHeaders(ctx); accept(ctx, fromQuery(ctx, ctx.req.body)); };
  },
};
