/**
 * Reads the YAML manifests and validates each against its JSON Schema (schemas/manifest/). The same
 * code runs at boot, in codegen and on hot reload; the first invalid manifest throws a ManifestError
 * naming the file, the path inside it, the line and the reason.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { type Document, LineCounter, isNode, parseDocument } from 'yaml';
import type { GatewayConfigManifest, ProviderManifest, RouteManifest } from '../generated/manifest-types.js';
import { ManifestError } from './errors.js';

/**
 * The line (1-based) of the node at a JSON Pointer in one loaded manifest, or of its nearest parent
 * that exists; undefined when the file has no such node. Lets cross-file checks, which run after
 * validation, report a line too (issue 29 item 5).
 */
export type LineOf = (pointer: string) => number | undefined;

/** One manifest file as loaded: its path relative to the root, its validated content and its line lookup. */
export interface LoadedManifest<T> { file: string; manifest: T; lineOf: LineOf }

/** Every manifest of one configuration, validated but not yet compiled. */
export interface RawGateway {
  root: string;
  configFile: string;
  config: GatewayConfigManifest;
  /** Lines of gateway.config.yaml (shown as `gateway.config.yaml`, relative to the root, in errors). */
  configLineOf: LineOf;
  routes: Array<LoadedManifest<RouteManifest>>;
  providers: Array<LoadedManifest<ProviderManifest>>;
}

type Kind = 'gateway-config' | 'route' | 'provider';
const validators = new Map<string, Map<Kind, ValidateFunction>>();

async function validatorsFor(root: string): Promise<Map<Kind, ValidateFunction>> {
  const cached = validators.get(root);
  if (cached) return cached;
  const ajv = new Ajv2020({ allErrors: false, strict: true });
  const kinds = ['gateway-config', 'route', 'provider'] as const;
  // Added first, compiled after: a schema may refer to another's $defs (an offering's `routing` is gateway-config's).
  const schemas = await Promise.all(kinds.map(async (kind) => JSON.parse(await readFile(join(root, 'schemas/manifest', `${kind}.schema.json`), 'utf8')) as { $id: string }));
  for (const schema of schemas) ajv.addSchema(schema);
  const compiled = new Map<Kind, ValidateFunction>();
  kinds.forEach((kind, i) => compiled.set(kind, ajv.getSchema(schemas[i]!.$id)!));
  validators.set(root, compiled);
  return compiled;
}

/** The pattern of a credential location (`auth.key`, each of `auth.keys`). */
const ENV_LOCATION = '^env:[A-Z][A-Z0-9_]*$';

function describe(error: ErrorObject): string {
  // Never echo the value: a credential pasted in place of its location must not reach a log.
  if (error.keyword === 'pattern' && error.params.pattern === ENV_LOCATION) return 'must be an env:NAME location (the environment variable holding the credential, e.g. env:OPENAI_API_KEY), never the credential itself';
  if (error.keyword === 'additionalProperties') return `unknown key "${String(error.params.additionalProperty)}"`;
  if (error.keyword === 'enum') return `${error.message}: ${(error.params.allowedValues as unknown[]).join(', ')}`;
  // A key the schema forbids in this case (`false`), e.g. a multipart key on a raw body.
  if (error.keyword === 'false schema') return `"${error.instancePath.split('/').pop()!.replace(/~1/g, '/').replace(/~0/g, '~')}" is not allowed here`;
  return error.message ?? 'invalid';
}

/** A JSON Pointer's segments, as yaml's getIn takes them (array indexes as numbers). */
function segmentsOf(pointer: string): Array<string | number> {
  return pointer.split('/').slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
}

/** The line lookup of one parsed document: the pointer's node, else its nearest existing parent. */
function lineLookup(doc: Document, lines: LineCounter): LineOf {
  return (pointer) => {
    const segments = segmentsOf(pointer);
    for (let n = segments.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true);
      if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
    }
    return undefined;
  };
}

/** Parses one YAML file and validates it; throws ManifestError with the line of the offending node. */
export async function readManifest<T>(root: string, file: string, kind: Kind): Promise<T> {
  return (await readManifestFile<T>(root, file, kind)).manifest;
}

/** Like readManifest, with the file's path relative to `root` and its line lookup. */
export async function readManifestFile<T>(root: string, file: string, kind: Kind): Promise<LoadedManifest<T>> {
  const shown = relative(root, file) || file;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ManifestError(shown, '', `cannot read: ${(error as Error).message}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new ManifestError(shown, '', `invalid YAML: ${first.message.split('\n')[0]}`, first.linePos?.[0]?.line);
  }
  const value = doc.toJS() as unknown;
  const validate = (await validatorsFor(root)).get(kind)!;
  const lineOf = lineLookup(doc, lines);
  if (!validate(value)) {
    const error = validate.errors![0]!;
    throw new ManifestError(shown, error.instancePath, describe(error), lineOf(error.instancePath));
  }
  return { file: shown, manifest: value as T, lineOf };
}

async function yamlFiles(folder: string): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.yaml') || n.endsWith('.yml')).sort().map((n) => join(folder, n));
}

/** Loads gateway.config.yaml and every route and provider manifest it includes. */
export async function loadGateway(configFile: string): Promise<RawGateway> {
  const absolute = resolve(configFile);
  const root = resolve(absolute, '..');
  const { manifest: config, lineOf: configLineOf } = await readManifestFile<GatewayConfigManifest>(root, absolute, 'gateway-config');
  const routeFiles = await yamlFiles(join(root, config.includes?.routes ?? 'routes'));
  const providerFiles = await yamlFiles(join(root, config.includes?.providers ?? 'providers'));
  const routes = await Promise.all(routeFiles.map((file) => readManifestFile<RouteManifest>(root, file, 'route')));
  const providers = await Promise.all(providerFiles.map((file) => readManifestFile<ProviderManifest>(root, file, 'provider')));
  return { root, configFile: absolute, config, configLineOf, routes, providers };
}
