/**
 * Cross-file rules JSON Schema cannot express (issue 9 point 2), checked at boot, on hot reload and
 * at codegen, each refusal naming file, path and reason: every translation a route can need exists;
 * every offering a billable route can reach is priced in a unit the route meters; a route's default
 * offering exists and is reachable; a route's `file_inputs` name fields of its request schema; a raw
 * body route validates its parameters and takes no type the gateway parses itself; a route that
 * streams calls only operations that answer server-sent events.
 */
import { unitPrice } from '../billing/pricing.js';
import type { ProviderManifest, RouteManifest } from '../generated/manifest-types.js';
import { meteredUnits } from '../meters/index.js';
import { servesOffering } from './upstream-choice.js';
import { hasTranslator } from '../translate/registry.js';
import { ManifestError } from './errors.js';
import { MODEL_PARAM } from './url-params.js';
import type { CompiledOffering, CompiledProvider, CompiledRoute } from './types.js';

/** Every translation a route can need must exist: checked at boot and at codegen, never per request. */
export function checkTranslators(routes: CompiledRoute[], providers: Array<{ file: string; manifest: ProviderManifest }>): void {
  for (const route of routes) {
    route.upstreams.forEach((upstream, index) => {
      for (const { manifest } of providers.filter((p) => p.manifest.operations[upstream.operation])) {
        const format = manifest.operations[upstream.operation]!.format;
        if (!hasTranslator(route.manifest.format, format)) {
          throw new ManifestError(route.file, `/upstreams/${index}`, `no translator ${route.manifest.format}--${format} for operation "${upstream.operation}" of provider ${manifest.id}`);
        }
      }
    });
  }
}

/**
 * `file_inputs` (spec 4.7 rule 3) rewrite one request field into another: both must be properties of
 * the route's request schema, and different, or the rewrite would reach the translator unvalidated.
 */
export function checkFileInputs(file: string, manifest: RouteManifest, requestSchema: object | undefined): void {
  const properties = (requestSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  for (const [field, rule] of Object.entries(manifest.file_inputs ?? {})) {
    // `into: {file: <part>}` puts the file into a declared multipart part instead of a body field.
    if (typeof rule.into === 'object') {
      if (!Object.hasOwn(properties, field)) throw new ManifestError(file, `/file_inputs/${field}`, `"${field}" is not a property of the route's request schema`);
      if (manifest.body?.type !== 'multipart' || !manifest.body.files?.[rule.into.file]) throw new ManifestError(file, `/file_inputs/${field}/into/file`, `"${rule.into.file}" is not a file part of the route's multipart body`);
      continue;
    }
    const unknown = [field, rule.into].find((name) => !Object.hasOwn(properties, name));
    if (unknown !== undefined) throw new ManifestError(file, `/file_inputs/${field}`, `"${unknown}" is not a property of the route's request schema`);
    if (rule.into === field) throw new ManifestError(file, `/file_inputs/${field}/into`, 'a file input must go into another field');
  }
}

/**
 * `url_inputs` (issue 12: `url` into `image`) and `query_fields` (spec 4.9: `to` in the query) name
 * fields of the route's request schema; an `into` field is another one. Checked like `file_inputs`.
 */
export function checkInputFields(file: string, manifest: RouteManifest, requestSchema: object | undefined): void {
  const properties = (requestSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  for (const [field, rule] of Object.entries(manifest.url_inputs ?? {})) {
    const unknown = [field, rule.into ?? field].find((name) => !Object.hasOwn(properties, name));
    if (unknown !== undefined) throw new ManifestError(file, `/url_inputs/${field}`, `"${unknown}" is not a property of the route's request schema`);
    if (rule.into === field) throw new ManifestError(file, `/url_inputs/${field}/into`, 'a URL input must go into another field');
  }
  (manifest.query_fields ?? []).forEach((field, i) => {
    if (!Object.hasOwn(properties, field)) throw new ManifestError(file, `/query_fields/${i}`, `"${field}" is not a property of the route's request schema`);
  });
}

/** Types the gateway's own parsers read (src/server/app.ts): a raw body can never receive them. */
const PARSED_TYPES = ['application/json', 'multipart/form-data'];

/**
 * A raw body (issue 9 point 3) carries no fields: the route's parameters come from `query_fields` and
 * must still be validated, so it needs a request schema; and its allow-list names only types that
 * reach it as bytes.
 */
export function checkRawBody(file: string, manifest: RouteManifest): void {
  if (manifest.body?.type !== 'raw') return;
  if (!manifest.schemas?.request) throw new ManifestError(file, '/schemas/request', 'a raw body route takes its parameters from the query: declare the request schema that validates them');
  (manifest.body.mime ?? []).forEach((type, i) => {
    if (PARSED_TYPES.includes(type)) throw new ManifestError(file, `/body/mime/${i}`, `${type} is read by the gateway's own parser, so a raw body cannot take it (raw types: any but ${PARSED_TYPES.join(', ')})`);
  });
}

/**
 * A route that streams (`stream.when`) may only call operations whose answer is server-sent events
 * (`answer: {type: sse}`), or that send a stream to a `stream_operation` (checked at compile to answer one).
 */
export function checkStreamingAnswers(routes: CompiledRoute[], providers: Array<{ file: string; manifest: ProviderManifest }>): void {
  for (const route of routes) {
    if (!route.streamPointer) continue;
    route.upstreams.forEach((upstream, index) => {
      for (const { manifest } of providers) {
        const op = manifest.operations[upstream.operation];
        const answer = op?.answer?.type ?? 'json';
        if (!op || answer === 'sse' || op.stream_operation !== undefined) continue;
        throw new ManifestError(route.file, `/upstreams/${index}`, `the route streams (stream.when ${route.manifest.stream!.when}) but operation "${upstream.operation}" of provider ${manifest.id} answers ${answer}: declare answer: {type: sse} if it streams`);
      }
    });
  }
}

/** The `{name}` parameters of an operation path. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

/**
 * Every `{name}` in the path (and stream path) of an operation a route can call must be resolved by the
 * route's `path_params`; `{model}` needs none (the gateway fills it with the served upstream model).
 */
export function checkPathParams(routes: CompiledRoute[], providers: Array<{ file: string; manifest: ProviderManifest }>): void {
  for (const route of routes) {
    route.upstreams.forEach((upstream, index) => {
      for (const { manifest } of providers) {
        const op = manifest.operations[upstream.operation];
        // {model} and the provider's url_params (src/config/url-params.ts) are filled by the gateway
        // itself; the route resolves the others.
        const own = (name: string) => name === MODEL_PARAM || Object.hasOwn(manifest.url_params ?? {}, name);
        const names = op ? [...pathParamNames(op.path), ...pathParamNames(op.stream_path ?? '')] : [];
        const unresolved = [...new Set(names)].filter((name) => !upstream.pathParams[name] && !own(name));
        if (unresolved.length > 0) {
          throw new ManifestError(route.file, `/upstreams/${index}/path_params`, `operation "${upstream.operation}" of provider ${manifest.id} has path ${op!.path}: declare where {${unresolved.join('}, {')}} comes from`);
        }
      }
    });
  }
}

/** True when `route` can serve `offering` (its service type, and an operation its provider has). */
function reaches(route: CompiledRoute, offering: CompiledOffering, providers: ReadonlyMap<string, CompiledProvider>): boolean {
  const provider = providers.get(offering.providerId);
  return route.serviceTypes.has(offering.serviceType) && provider !== undefined && servesOffering(route, offering, provider);
}

/** A billable route must meter the unit of every enabled offering it can reach. */
export function checkMeters(routes: CompiledRoute[], offerings: ReadonlyMap<string, CompiledOffering>, providers: ReadonlyMap<string, CompiledProvider>): void {
  for (const route of routes) {
    if (!route.billable || route.manifest.handler !== 'proxy') continue;
    const units = meteredUnits(route);
    for (const offering of offerings.values()) {
      if (!offering.enabled || units.has(offering.billing.unit) || !reaches(route, offering, providers)) continue;
      throw new ManifestError(route.file, '/meter', `offering "${offering.id}" (provider ${offering.providerId}) is billed per ${offering.billing.unit}, which this route does not meter (it meters: ${[...units].join(', ') || 'nothing'})`);
    }
  }
}

/** Whether `a` costs less per unit than `b` (exact: cross-multiplied, no division). */
function cheaper(a: CompiledOffering, b: CompiledOffering): boolean {
  return unitPrice(a) * b.billing.per < unitPrice(b) * a.billing.per;
}

/**
 * Sets each route's default offerings (`model: {required: false}`): the one the manifest names, which
 * must exist and be reachable, or else every available offering the route reaches, cheapest first.
 */
export function chooseDefaultModels(routes: CompiledRoute[], offerings: ReadonlyMap<string, CompiledOffering>, providers: ReadonlyMap<string, CompiledProvider>): void {
  for (const route of routes) {
    const model = route.manifest.model;
    if (!model || model.required !== false) continue;
    if (model.default !== undefined) {
      const named = offerings.get(model.default);
      if (!named || !reaches(route, named, providers)) throw new ManifestError(route.file, '/model/default', `offering "${model.default}" does not exist or is not served by this route`);
      route.defaultModels = [named.id];
      continue;
    }
    const candidates = [...offerings.values()].filter((o) => o.enabled && o.availability === 'available' && reaches(route, o, providers));
    // A stable sort: offerings of one price keep the catalogue's order.
    candidates.sort((a, b) => (cheaper(a, b) ? -1 : cheaper(b, a) ? 1 : 0));
    route.defaultModels = candidates.map((o) => o.id);
  }
}
