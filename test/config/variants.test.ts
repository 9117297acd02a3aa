/**
 * `billing.variants` at load (issue 31 item 8; src/config/variants.ts and the provider schema): each
 * refusal names file, path and reason. Variants replace `price` (never both), need a unit other than
 * token, may not repeat a `when` (the later could never price a request), and stay off VIDEO offerings
 * (billed by the poller after the request is gone).
 */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { catalogBody } from '../../src/server/catalog.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

const CONTEXT = { env: {}, simulatorUrl: 'http://127.0.0.1:1' };

async function refusal(edit: (c: ConfigCopy) => Promise<void>): Promise<ManifestError> {
  const copy = await copyConfig();
  await edit(copy);
  const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, CONTEXT)).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ManifestError);
  return error as ManifestError;
}

/** Edits one offering of providers/openai.yaml. */
const editOffering = (id: string, edit: (o: Record<string, any>) => void) => (c: ConfigCopy) => c.editYaml('providers/openai.yaml', (d) => { edit(d.offerings.find((o: { id: string }) => o.id === id)); });

describe('billing.variants at load', () => {
  it('compiles the shipped dall-e variants, and the catalogue lists each with its price', async () => {
    const gateway = await compileGateway(await loadGateway((await copyConfig()).configFile), CONTEXT);
    expect(gateway.offerings.get('dall-e-3')!.billing.variants).toHaveLength(6);
    const entry = (catalogBody(gateway).data as Array<Record<string, any>>).find((o) => o.id === 'dall-e-2');
    expect(entry!.billing).toEqual({ unit: 'image', per: 1, prices: {}, variants: [
      { when: { size: '256x256' }, price: '0.016' }, { when: { size: '512x512' }, price: '0.018' }, { when: { size: '1024x1024' }, price: '0.02' },
    ] });
  });

  it('refuses variants beside a price, on a token offering, or with no when', async () => {
    for (const [edit, path] of [
      [editOffering('dall-e-3', (o) => { o.billing.price = '0.04'; }), '/offerings'],
      [editOffering('gpt-4o', (o) => { o.billing.variants = [{ when: { quality: 'hd' }, price: '1' }]; }), '/offerings'],
      [editOffering('dall-e-3', (o) => { o.billing.variants[0].when = {}; }), '/offerings'],
    ] as const) {
      const error = await refusal(edit);
      expect(error.file).toBe('providers/openai.yaml');
      expect(error.path.startsWith(path)).toBe(true);
    }
  });

  it('refuses a variant whose when repeats an earlier one', async () => {
    const error = await refusal(editOffering('dall-e-3', (o) => { o.billing.variants.push({ when: { size: '1024x1024', quality: 'standard' }, price: '0.01' }); }));
    expect(error.path).toMatch(/^\/offerings\/\d+\/billing\/variants\/6\/when$/);
    expect(error.reason).toBe('variant 6 has the same `when` as variant 0, which always prices it first');
  });

  it('refuses variants on a VIDEO offering', async () => {
    const error = await refusal(editOffering('sora-2', (o) => { o.billing = { unit: 'second', per: 1, variants: [{ when: { size: '720x1280' }, price: '0.10' }] }; }));
    expect(error.reason).toMatch(/VIDEO offering is billed after its request is gone/);
  });
});
