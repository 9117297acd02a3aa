/**
 * src/config/environment.ts lists every environment variable src/ reads (scanned here: `env.NAME`,
 * `env['NAME']`, `process.env.NAME` and the typed readers' `'NAME'` arguments), and nothing else.
 * Provider variables come from providers/*.yaml.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT, providerVariables } from '../../src/config/environment.js';
import { loadGateway } from '../../src/config/load.js';
import { projectRoot } from '../../src/paths.js';

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The variable names a source text reads. */
function readsOf(text: string): string[] {
  const patterns = [/\benv(?:\.|\[')([A-Z][A-Z0-9_]+)/g, /\b(?:intFromEnv\(env, |positive\(env, |envInt\()'([A-Z][A-Z0-9_]+)'/g];
  return patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1]!));
}

describe('the environment variables the gateway reads', () => {
  it('are exactly the ones src/config/environment.ts lists', () => {
    const read = new Set(sources(join(projectRoot(), 'src')).filter((f) => !f.includes('/generated/')).flatMap((f) => readsOf(readFileSync(f, 'utf8'))));
    expect(read.size).toBeGreaterThan(20);
    expect(ENVIRONMENT.map((v) => v.name).sort()).toEqual([...read].sort());
    expect(new Set(ENVIRONMENT.map((v) => v.name)).size).toBe(ENVIRONMENT.length);
  });

  it('are each named in the README', () => {
    const readme = readFileSync(join(projectRoot(), 'README.md'), 'utf8');
    const quoted = [...readme.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
    for (const { name } of ENVIRONMENT) expect(quoted.some((q) => new RegExp(`\\b${name}\\b`).test(q)), name).toBe(true);
  });

  it('finds reads in each form the code uses', () => {
    expect(readsOf("env.REDIS_URL; process.env.GATEWAY_WATCH; env['X_Y']; intFromEnv(env, 'PORT', 1); envInt('SIM_PORT', 8089); positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048)")).toEqual(['REDIS_URL', 'GATEWAY_WATCH', 'X_Y', 'PORT', 'SIM_PORT', 'OTEL_BSP_MAX_QUEUE_SIZE']);
  });

  it('lists the providers\' variables from their manifests', async () => {
    const names = providerVariables(await loadGateway(join(projectRoot(), 'gateway.config.yaml')));
    expect(names).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'VLLM_BASE_URL']));
    // The AWS credentials are both: the S3 blob store reads them, and providers/bedrock.yaml names them.
    const shared = new Set(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);
    for (const name of names) expect(ENVIRONMENT.some((v) => v.name === name) && !shared.has(name), name).toBe(false);
  });
});
