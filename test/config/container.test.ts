/**
 * The container files (issue 33 item 5), checked for what can be checked without Docker (these
 * machines reach no registry, so nothing is built): compose.yaml parses; its services and the
 * gateway replicas' variables are the README section's; each variable is one the gateway reads
 * (src/config/environment.ts, or a provider's manifest); the URLs name the compose services; the
 * Dockerfile is multi-stage, runs as a non-root user, exposes the replicas' port and checks /readyz.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT, providerVariables } from '../../src/config/environment.js';
import { loadGateway } from '../../src/config/load.js';
import { projectRoot } from '../../src/paths.js';

interface Service { image?: string; build?: string; environment?: Record<string, string>; ports?: string[]; depends_on?: Record<string, unknown>; entrypoint?: string[] }
const root = projectRoot();
const text = (file: string): string => readFileSync(join(root, file), 'utf8');
// Compose reads YAML merge keys (`<<: *gateway`): the yaml package does with `merge`.
const compose = parse(text('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
const gateways = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

/** The README's "Running in containers" section. */
function readmeSection(): string {
  const readme = text('README.md');
  const start = readme.indexOf('\n## Running in containers\n');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** Names in backquotes, e.g. `redis` or `REDIS_URL`. */
const quoted = (section: string): Set<string> => new Set([...section.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!));

describe('compose.yaml', () => {
  it('runs two gateway replicas, PostgreSQL, Redis and an S3-compatible store', () => {
    expect(gateways.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2']);
    const images = Object.values(compose.services).map((s) => s.image ?? '');
    for (const image of ['postgres:', 'redis:', 'minio/minio']) expect(images.some((i) => i.startsWith(image)), image).toBe(true);
  });

  it('gives the replicas only variables the gateway reads, pointing at the compose services', async () => {
    const known = new Set([...ENVIRONMENT.filter((v) => v.reader === 'gateway').map((v) => v.name), ...providerVariables(await loadGateway(join(root, 'gateway.config.yaml')))]);
    for (const [name, service] of gateways) {
      const env = service.environment ?? {};
      for (const variable of Object.keys(env)) expect(known.has(variable), `${name}: ${variable} is not read by the gateway`).toBe(true);
      expect(env.GATEWAY_HOST).toBe('0.0.0.0');
      expect(new URL(env.DATABASE_URL!).hostname).toBe('postgres');
      expect(new URL(env.REDIS_URL!).hostname).toBe('redis');
      expect(new URL(env.S3_ENDPOINT!).hostname).toBe('minio');
      expect(env.GATEWAY_BLOB_STORE).toBe('s3');
      // The bucket the replicas use is the one minio-init creates.
      expect(compose.services['minio-init']!.entrypoint!.join(' ')).toContain(`local/${env.S3_BUCKET}`);
      expect(service.ports).toEqual([expect.stringMatching(new RegExp(`:${env.PORT}$`))]);
      expect(Object.keys(service.depends_on ?? {}).sort()).toEqual(['minio-init', 'postgres', 'redis']);
    }
    // Both replicas share one configuration but their public URL.
    const [a, b] = gateways.map(([, s]) => { const { GATEWAY_PUBLIC_URL: _u, ...rest } = s.environment!; return rest; });
    expect(a).toEqual(b);
  });

  it('matches the README section: every service, every replica variable, and what was not built', () => {
    const section = readmeSection();
    const names = quoted(section);
    for (const service of Object.keys(compose.services)) expect(names.has(service), `README lacks service ${service}`).toBe(true);
    const variables = new Set(gateways.flatMap(([, s]) => Object.keys(s.environment ?? {})));
    for (const variable of variables) expect(names.has(variable), `README lacks ${variable}`).toBe(true);
    // Every variable the section names is one the replicas get, one compose interpolates, or one the gateway reads.
    const interpolated = new Set([...text('compose.yaml').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
    const readable = new Set(ENVIRONMENT.map((v) => v.name));
    // (A variable has an underscore; HEALTHCHECK, a Dockerfile instruction, does not.)
    for (const name of [...names].filter((n) => /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(n))) {
      expect(variables.has(name) || interpolated.has(name) || readable.has(name), `README names ${name}, which nothing reads`).toBe(true);
    }
    expect(section).toMatch(/have not been built/);
    expect(section).toMatch(/reach no container registry/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = text('Dockerfile');
  const lines = dockerfile.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#'));
  const runtime = lines.slice(lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true));

  it('is multi-stage and runs the last stage as a non-root user', () => {
    expect(lines.filter((l) => /^FROM \S+ AS \w+$/.test(l)).length).toBeGreaterThanOrEqual(2);
    const user = runtime.filter((l) => l.startsWith('USER ')).pop();
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)\b/);
    expect(runtime.some((l) => l.startsWith('COPY --from=') && l.includes('node_modules'))).toBe(true);
  });

  it('exposes the replicas\' port, checks /readyz with node and sets only variables the gateway reads', () => {
    const port = gateways[0]![1].environment!.PORT;
    expect(runtime).toContain(`EXPOSE ${port}`);
    const health = dockerfile.slice(dockerfile.indexOf('HEALTHCHECK'));
    expect(health).toMatch(/CMD \["node", "-e", "fetch\(.*\/readyz/);
    const env = dockerfile.match(/^ENV ([\s\S]*?)\n(?!\s)/m)![1]!;
    const names = [...env.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(2);
    for (const name of names) expect(name === 'NODE_ENV' || ENVIRONMENT.some((v) => v.name === name), name).toBe(true);
  });

  it('copies only files that exist, including everything the gateway reads at run time', () => {
    const copied = runtime.filter((l) => l.startsWith('COPY ') && !l.startsWith('COPY --from=')).flatMap((l) => l.split(/\s+/).slice(1, -1));
    for (const path of copied) expect(existsSync(join(root, path)), path).toBe(true);
    // What src/ reads relative to the project root (src/paths.ts): the config, manifests, schemas, migrations, assets, the document.
    for (const path of ['package.json', 'gateway.config.yaml', 'routes', 'providers', 'schemas', 'src/store/migrations', 'src/console/assets', 'src/generated/openapi.json']) {
      expect(copied, path).toContain(path);
    }
  });
});
