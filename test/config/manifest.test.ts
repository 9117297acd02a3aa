/** Manifest validation: an invalid manifest names the file, the path inside it, the line and the reason. */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { catalogBody } from '../../src/server/catalog.js';
import { copyConfig } from '../helpers/config.js';

async function loadError(edit: (c: Awaited<ReturnType<typeof copyConfig>>) => Promise<void>): Promise<ManifestError> {
  const copy = await copyConfig();
  await edit(copy);
  const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' })).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ManifestError);
  return error as ManifestError;
}

describe('manifest validation', () => {
  it('loads and compiles the shipped configuration', async () => {
    const copy = await copyConfig();
    const gateway = await compileGateway(await loadGateway(copy.configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
    expect(gateway.routes.map((r) => r.manifest.id)).toContain('chat-completions');
    expect(gateway.offerings.get('gpt-4o-mini')?.billing.prices.input).toBe(150_000_000n);
  });

  it('rejects an unknown key with file, path and line', async () => {
    const error = await loadError((c) => c.editYaml('providers/openai.yaml', (d) => { d.offerings[1].colour = 'blue'; }));
    expect(error.file).toBe('providers/openai.yaml');
    expect(error.path).toBe('/offerings/1');
    expect(error.reason).toBe('unknown key "colour"');
    expect(error.line).toBeGreaterThan(1);
    expect(error.message).toMatch(/^providers\/openai\.yaml:\d+: \/offerings\/1: unknown key "colour"$/);
  });

  it('rejects a float-looking price with too many decimals', async () => {
    const error = await loadError((c) => c.editYaml('providers/openai.yaml', (d) => { d.offerings[0].billing.prices.input = '0.0000000001'; }));
    expect(error.path).toBe('/offerings/0/billing/prices/input');
    expect(error.reason).toMatch(/pattern/);
  });

  it('requires context_window on a token-priced offering, an integer of at least 1', async () => {
    const missing = await loadError((c) => c.editYaml('providers/openai.yaml', (d) => { delete d.offerings[2].context_window; }));
    expect(missing.file).toBe('providers/openai.yaml');
    expect(missing.path).toBe('/offerings/2');
    expect(missing.reason).toMatch(/context_window/);
    const zero = await loadError((c) => c.editYaml('providers/anthropic.yaml', (d) => { d.offerings[0].context_window = 0; }));
    expect(zero.path).toBe('/offerings/0/context_window');
  });

  it('requires max_output_tokens on a token-priced offering, 0 only for an embedding (it generates no tokens), as the catalogue shows it', async () => {
    const missing = await loadError((c) => c.editYaml('providers/cohere.yaml', (d) => { delete d.offerings.find((o: { id: string }) => o.id === 'embed-fast').max_output_tokens; }));
    expect(missing.file).toBe('providers/cohere.yaml');
    expect(missing.path).toMatch(/^\/offerings\/\d+$/);
    expect(missing.reason).toBe("must have required property 'max_output_tokens'");
    const zero = await loadError((c) => c.editYaml('providers/openai.yaml', (d) => { d.offerings[0].max_output_tokens = 0; }));
    expect(zero.path).toBe('/offerings/0/max_output_tokens');
    expect(zero.reason).toBe('only an EMBEDDING offering may declare 0 (it generates no tokens); a CHAT model needs its real output cap');
    const gateway = await compileGateway(await loadGateway((await copyConfig()).configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
    const entries = (catalogBody(gateway).data as Array<Record<string, unknown>>);
    expect(entries.find((e) => e.id === 'embed-fast')).toMatchObject({ context_window: 128000, max_output_tokens: 0 });
    expect(entries.find((e) => e.id === 'text-embedding-3-small')).toMatchObject({ context_window: 8192, max_output_tokens: 0 });
    expect(entries.find((e) => e.id === 'gpt-4o-mini')).toMatchObject({ context_window: 128000, max_output_tokens: 16384 });
  });

  it('rejects a wrong enum value in a route', async () => {
    const error = await loadError((c) => c.editYaml('routes/chat-completions.yaml', (d) => { d.method = 'FETCH'; }));
    expect(error.file).toBe('routes/chat-completions.yaml');
    expect(error.path).toBe('/method');
    expect(error.reason).toMatch(/must be equal to one of the allowed values: GET, POST/);
  });

  it('rejects invalid YAML with its line', async () => {
    const error = await loadError((c) => c.write('routes/models.yaml', 'version: 1\nid: [unclosed\n'));
    expect(error.file).toBe('routes/models.yaml');
    expect(error.reason).toMatch(/invalid YAML/);
  });

  it('rejects cross-file mistakes: duplicate model ids, missing translators, duplicate routes', async () => {
    expect((await loadError((c) => c.editYaml('providers/openai.yaml', (d) => { d.offerings[1].id = d.offerings[0].id; }))).reason).toMatch(/declared by two offerings/);
    const noTranslator = await loadError((c) => c.editYaml('providers/openai.yaml', (d) => { d.operations['chat-completions'].format = 'mystery-format'; }));
    expect(noTranslator.file).toBe('routes/chat-completions.yaml');
    expect(noTranslator.reason).toMatch(/no translator openai-chat--mystery-format for operation "chat-completions" of provider openai/);
    expect((await loadError((c) => c.editYaml('routes/model.yaml', (d) => { d.path = '/v1/models'; d.method = 'GET'; }))).reason).toMatch(/already served/);
  });

  it('rejects a missing required field in the top-level config', async () => {
    const error = await loadError((c) => c.write('gateway.config.yaml', 'server: { port: 1 }\n'));
    expect(error.file).toBe('gateway.config.yaml');
    expect(error.reason).toMatch(/must have required property 'version'/);
  });
});
