/**
 * `aliases:` at load (issue 31 item 4; src/config/aliases.ts): the shipped dated ids resolve to their
 * offerings, and an alias that is its own id, another offering's id or another offering's alias (in
 * any provider file) stops the load with file, line, path and a reason naming both offerings.
 */
import { describe, expect, it } from 'vitest';
import { answerModelId, modelById } from '../../src/config/aliases.js';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

const CONTEXT = { env: {}, simulatorUrl: 'http://127.0.0.1:1' };

async function refusal(edit: (c: ConfigCopy) => Promise<void>): Promise<ManifestError> {
  const copy = await copyConfig();
  await edit(copy);
  const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, CONTEXT)).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ManifestError);
  return error as ManifestError;
}

/** Sets the aliases of one offering of `file`. */
const aliases = (file: string, id: string, list: string[]) => (c: ConfigCopy) => c.editYaml(file, (d) => { d.offerings.find((o: { id: string }) => o.id === id).aliases = list; });

describe('model aliases at load', () => {
  it('resolves the shipped dated ids and Cohere\'s rerank name to their offerings', async () => {
    const gateway = await compileGateway(await loadGateway((await copyConfig()).configFile), CONTEXT);
    const cases = { 'claude-sonnet-4-5-20250929': 'claude-sonnet-4-5', 'claude-haiku-4-5-20251001': 'claude-haiku-4-5', 'claude-opus-4-5-20251101': 'claude-opus-4-5', 'gpt-4o-2024-08-06': 'gpt-4o', 'gpt-4o-mini-2024-07-18': 'gpt-4o-mini', 'rerank-v3.5': 'rerank-pro' };
    for (const [alias, id] of Object.entries(cases)) expect(modelById(gateway, alias)?.id, alias).toBe(id);
    expect(modelById(gateway, 'gpt-4o')?.id).toBe('gpt-4o');
    expect(modelById(gateway, 'gpt-4o-2099-01-01')).toBeUndefined();
    // The aliases are not offerings: the catalogue and the defaults still see each offering once.
    expect(gateway.offerings.has('gpt-4o-2024-08-06')).toBe(false);
  });

  it('names the alias the client asked for in the answer, else the serving offering', async () => {
    const gateway = await compileGateway(await loadGateway((await copyConfig()).configFile), CONTEXT);
    const gpt4o = gateway.offerings.get('gpt-4o')!;
    expect(answerModelId(gpt4o, 'gpt-4o-2024-08-06')).toBe('gpt-4o-2024-08-06');
    expect(answerModelId(gpt4o, 'gpt-4o')).toBe('gpt-4o');
    // A fallback answering a request for another model's alias says who answered.
    expect(answerModelId(gpt4o, 'claude-haiku-4-5-20251001')).toBe('gpt-4o');
    expect(answerModelId(gpt4o, undefined)).toBe('gpt-4o');
  });

  it('refuses an alias that is another offering\'s id, naming both', async () => {
    const error = await refusal(aliases('providers/openai.yaml', 'gpt-4o', ['gpt-4o-2024-08-06', 'claude-haiku-4-5']));
    expect(error.file).toBe('providers/openai.yaml');
    expect(error.path).toMatch(/^\/offerings\/\d+\/aliases\/1$/);
    expect(error.line).toBeGreaterThan(1);
    expect(error.reason).toBe('alias "claude-haiku-4-5" of offering "gpt-4o" is the id of offering "claude-haiku-4-5" (providers/anthropic.yaml)');
  });

  it('refuses an alias another offering already has, in another provider file too', async () => {
    const error = await refusal(aliases('providers/openai.yaml', 'gpt-4o-mini', ['claude-sonnet-4-5-20250929']));
    // Provider files load in name order: anthropic.yaml's alias came first.
    expect(error.file).toBe('providers/openai.yaml');
    expect(error.reason).toBe('alias "claude-sonnet-4-5-20250929" of offering "gpt-4o-mini" is already an alias of offering "claude-sonnet-4-5" (providers/anthropic.yaml; a copied offering must drop its `aliases`)');
  });

  it('refuses a copied offering that keeps the original\'s aliases, and an alias that is its own id', async () => {
    const copied = await refusal((c) => c.editYaml('providers/cohere.yaml', (d) => { d.offerings.push({ ...d.offerings[0], id: 'rerank-copy' }); }));
    expect(copied.reason).toBe('alias "rerank-v3.5" of offering "rerank-copy" is already an alias of offering "rerank-pro" (providers/cohere.yaml; a copied offering must drop its `aliases`)');
    const own = await refusal(aliases('providers/openai.yaml', 'gpt-4o', ['gpt-4o']));
    expect(own.reason).toBe('alias "gpt-4o" of offering "gpt-4o" is its own id');
  });

  it('refuses a malformed or repeated alias in the schema', async () => {
    for (const list of [['has space'], ['gpt-4o-x', 'gpt-4o-x'], []]) {
      const error = await refusal(aliases('providers/openai.yaml', 'gpt-4o', list));
      expect(error.path, JSON.stringify(list)).toMatch(/^\/offerings\/\d+\/aliases/);
    }
  });
});
