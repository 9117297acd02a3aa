/**
 * Reads the YAML manifests and validates each against its JSON Schema (schemas/manifest/). The same
 * code runs at boot, in codegen and on hot reload; the first invalid manifest throws a ManifestError
 * naming the file, the path inside it, the line and the reason.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { LineCounter, isNode, parseDocument } from 'yaml';
import type { GatewayConfigManifest, ProviderManifest, RouteManifest } from '../generated/manifest-types.js';
import { ManifestError } from './errors.js';

/** Every manifest of one configuration, validated but not yet compiled. */
export interface RawGateway {
  root: string;
  configFile: string;
  config: GatewayConfigManifest;
  routes: Array<{ file: string; manifest: RouteManifest }>;
  providers: Array<{ file: string; manifest: ProviderManifest }>;
}

type Kind = 'gateway-config' | 'route' | 'provider';
const validators = new Map<string, Map<Kind, ValidateFunction>>();

async function validatorsFor(root: string): Promise<Map<Kind, ValidateFunction>> {
  const cached = validators.get(root);
  if (cached) return cached;
  const ajv = new Ajv2020({ allErrors: false, strict: true });
  const compiled = new Map<Kind, ValidateFunction>();
  for (const kind of ['gateway-config', 'route', 'provider'] as const) {
    const file = join(root, 'schemas/manifest', `${kind}.schema.json`);
    compiled.set(kind, ajv.compile(JSON.parse(await readFile(file, 'utf8'))));
  }
  validators.set(root, compiled);
  return compiled;
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') return `unknown key "${String(error.params.additionalProperty)}"`;
  if (error.keyword === 'enum') return `${error.message}: ${(error.params.allowedValues as unknown[]).join(', ')}`;
  // A key the schema forbids in this case (`false`), e.g. a multipart key on a raw body.
  if (error.keyword === 'false schema') return `"${error.instancePath.split('/').pop()!.replace(/~1/g, '/').replace(/~0/g, '~')}" is not allowed here`;
  return error.message ?? 'invalid';
}

/** Parses one YAML file and validates it; throws ManifestError with the line of the offending node. */
export async function readManifest<T>(root: string, file: string, kind: Kind): Promise<T> {
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
  if (!validate(value)) {
    const error = validate.errors![0]!;
    const segments = error.instancePath.split('/').slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
    const node = doc.getIn(segments, true);
    const line = isNode(node) && node.range ? lines.linePos(node.range[0]).line : undefined;
    throw new ManifestError(shown, error.instancePath, describe(error), line);
  }
  return value as T;
}

async function yamlFiles(folder: string): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.yaml') || n.endsWith('.yml')).sort().map((n) => join(folder, n));
}

/** Loads gateway.config.yaml and every route and provider manifest it includes. */
export async function loadGateway(configFile: string): Promise<RawGateway> {
  const absolute = resolve(configFile);
  const root = resolve(absolute, '..');
  const config = await readManifest<GatewayConfigManifest>(root, absolute, 'gateway-config');
  const routeFiles = await yamlFiles(join(root, config.includes?.routes ?? 'routes'));
  const providerFiles = await yamlFiles(join(root, config.includes?.providers ?? 'providers'));
  const routes = await Promise.all(routeFiles.map(async (file) => ({ file: relative(root, file), manifest: await readManifest<RouteManifest>(root, file, 'route') })));
  const providers = await Promise.all(providerFiles.map(async (file) => ({ file: relative(root, file), manifest: await readManifest<ProviderManifest>(root, file, 'provider') })));
  return { root, configFile: absolute, config, routes, providers };
}
