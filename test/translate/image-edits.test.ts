/**
 * Image edits (spec 4.14) beyond the golden fixtures and the end-to-end test: the engine pieces they
 * added, each at its edges: image input tokens priced apart (exact nano-USD, chat pricing unchanged),
 * a meter source's `plus` and the `files` counter, an offering's `operations` (the boot check and the
 * routes it opens), an offering's `files` limits, the image probe, a form's total size, and the
 * simulator's checks.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { holdAmount, tokenCharge } from '../../src/billing/pricing.js';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import type { CompiledOffering } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import { filesCounter } from '../../src/meters/counters/files.js';
import { compileSource, readScaled, readsRequestOnly } from '../../src/meters/sources.js';
import { readMultipart, type UploadedFile } from '../../src/bodies/multipart.js';
import { checkOfferingFiles } from '../../src/pipeline/file-limits.js';
import { probeFiles } from '../../src/pipeline/file-probes.js';
import type { RequestContext } from '../../src/pipeline/context.js';
import { servesOffering, wrongEndpoint } from '../../src/config/upstream-choice.js';
import { validateEdit, type EditForm } from '../../src/sim/openai-image-edits.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { encodeMultipart } from '../helpers/fuzz-requests.js';
import { png } from '../helpers/images.js';

function refusal(run: () => unknown): GatewayError {
  try { run(); } catch (error) { return error as GatewayError; }
  throw new Error('accepted');
}

const compile = async (configFile: string) => compileGateway(await loadGateway(configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });

describe('image input tokens priced at their own rate', () => {
  // gpt-image-1 per 1M tokens: text input $5, image input $10, output $40 (nano-USD per 1M tokens).
  const prices = { input: 5_000_000_000n, output: 40_000_000_000n, cachedInput: 5_000_000_000n, cacheWrite: 5_000_000_000n, imageInput: 10_000_000_000n };
  const offering = { billing: { unit: 'token', per: 1_000_000n, price: 0n, prices, priceText: {}, tools: {}, toolText: {} } } as unknown as CompiledOffering;
  const usage = (input: number, output: number, imageInput?: number) => ({ input, output, cachedInput: 0, cacheWrite: 0, reasoning: 0, ...(imageInput === undefined ? {} : { imageInput }) });

  it('prices image tokens at $10 per 1M and the rest of the input at $5, to the nano-dollar', () => {
    // 8 text x 5,000 + 13,644 image x 10,000 + 12,416 output x 40,000 = 40,000 + 136,440,000 + 496,640,000.
    expect(tokenCharge(usage(13_652, 12_416, 13_644), offering)).toBe(633_120_000n);
    // One image token: $0.00001 exactly; one text token $0.000005.
    expect(tokenCharge(usage(1, 0, 1), offering)).toBe(10_000n);
    expect(tokenCharge(usage(1, 0), offering)).toBe(5_000n);
  });

  it('rounds the row once, and never counts more image tokens than input tokens', () => {
    const cheap = { billing: { ...offering.billing, prices: { ...prices, input: 1_000n, imageInput: 3_000n, output: 0n } } } as unknown as CompiledOffering;
    // 1 text x 0.001 + 166 image x 0.003 = 0.499 nano -> 0; 167 image: 0.502 -> 1.
    expect(tokenCharge(usage(167, 0, 166), cheap)).toBe(0n);
    expect(tokenCharge(usage(167, 0, 167), cheap)).toBe(1n);
    expect(tokenCharge(usage(10, 0, 50), offering)).toBe(tokenCharge(usage(10, 0, 10), offering));
  });

  it('leaves an offering without an image price, and usage without image tokens, priced as before', async () => {
    const gateway = await compile(`${projectRoot()}/gateway.config.yaml`);
    const chat = gateway.offerings.get('gpt-4o')!;
    expect(chat.billing.prices.imageInput).toBe(chat.billing.prices.input);
    expect(chat.billing.priceText).not.toHaveProperty('image_input');
    expect(gateway.offerings.get('gpt-image-1')!.billing.prices).toMatchObject({ input: 5_000_000_000n, imageInput: 10_000_000_000n });
    expect(tokenCharge(usage(1000, 500, 0), chat)).toBe(tokenCharge(usage(1000, 500), chat));
    // The hold prices the input estimate at the highest input rate: the image rate for gpt-image-1.
    expect(holdAmount(1000, 0, 0n, offering)).toBe((1008n * 10_000_000_000n + 999_999n) / 1_000_000n);
  });
});

describe('a meter source\'s plus, and the files counter', () => {
  const files = { image: [{ size_bytes: 1 }, { size_bytes: 2 }], mask: [{ size_bytes: 3 }] };

  it('counts the measured files of every value; absent counts none; anything else is refused', () => {
    expect(filesCounter.count([files.image, files.mask, undefined])).toBe(3);
    expect(() => filesCounter.count(['x'])).toThrow(/expected a list of files/);
  });

  it('adds a second source, after the first one\'s times, and reads the request only when both do', () => {
    const source = compileSource({ constant: 10, times: 2, plus: { counter: 'files', of: ['files:/image', 'files:/mask'], times: 8192 } }, 'r.yaml', '/meter/token/reserve');
    expect(readScaled(source, { request: {}, files, answer: null })).toBe(20 + 3 * 8192);
    expect(readsRequestOnly(source)).toBe(true);
    expect(readsRequestOnly(compileSource({ constant: 1, plus: { upstream: '/usage/n' } }, 'r.yaml', '/x'))).toBe(false);
    expect(() => compileSource({ constant: 1, plus: { counter: 'pixels', of: ['/x'] } }, 'r.yaml', '/meter/token/reserve')).toThrow(ManifestError);
  });
});

describe('an offering\'s operations', () => {
  async function refused(edit: (c: ConfigCopy) => Promise<void>): Promise<ManifestError> {
    const copy = await copyConfig();
    await edit(copy);
    const error = await compile(copy.configFile).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    return error as ManifestError;
  }

  it('refuses at boot an operation its provider does not have, with file, path and reason', async () => {
    const e = await refused((c) => c.editYaml('providers/openai.yaml', (d) => { d.offerings.find((o: { id: string }) => o.id === 'dall-e-3').operations = ['images-generations', 'image-edits']; }));
    expect(e.file).toBe('providers/openai.yaml');
    expect(e.path).toMatch(/^\/offerings\/\d+\/operations$/);
    expect(e.reason).toMatch(/^unknown operation "image-edits" \(the provider's operations: chat-completions, .*images-edits/);
  });

  it('limits the routes that reach the model, and the refusal names the endpoint that serves it', async () => {
    const gateway = await compile(`${projectRoot()}/gateway.config.yaml`);
    const route = (id: string) => gateway.routes.find((r) => r.manifest.id === id)!;
    const openai = gateway.providers.get('openai')!;
    const dalle3 = gateway.offerings.get('dall-e-3')!;
    expect(servesOffering(route('images-generations'), dalle3, openai)).toBe(true);
    expect(servesOffering(route('images-edits'), dalle3, openai)).toBe(false);
    expect(servesOffering(route('images-edits'), gateway.offerings.get('dall-e-2')!, openai)).toBe(true);
    expect(wrongEndpoint(gateway, route('images-edits'), dalle3, openai).message).toBe('The model "dall-e-3" is not served by /v1/images/edits. Use /v1/images/generations instead.');
  });
});

describe('an offering\'s file limits and the image probe', () => {
  const file = (field: string, data: Buffer, contentType = 'image/png'): UploadedFile => ({ field, filename: `${field}.png`, contentType, data });
  const limits = { image: { max: 1, maxBytes: 200, mime: new Set(['image/png']), square: true } };
  const spec = { files: { image: { maxBytes: 1000, mime: new Set(['image/png', 'image/jpeg', 'image/webp']), min: 1, max: 16, probe: 'image' as const } }, maxFields: 8, fieldMaxBytes: 100 };
  const probed = async (files: UploadedFile[]) => {
    const ctx = { files } as unknown as RequestContext;
    await probeFiles(ctx, spec);
    return ctx.files;
  };

  it('the probe verifies the bytes, sends the verified type, and measures width and height', async () => {
    const [one] = await probed([file('image', png(3, 3), 'image/jpeg')]);
    expect(one).toMatchObject({ contentType: 'image/png', facts: { width: 3, height: 3, size_bytes: png(3, 3).length } });
    await expect(probed([file('image', Buffer.from('GIF89a....'))])).rejects.toMatchObject({ code: 'invalid_request', extra: { param: 'image' } });
    await expect(probed([file('image', Buffer.from('plain text'))])).rejects.toMatchObject({ extra: { param: 'image' } });
  });

  it('refuses more files, larger files, other types or non-square images than the model takes, naming the part', async () => {
    const square = (await probed([file('image', png(4, 4))]))[0]!;
    expect(() => checkOfferingFiles([square], limits, 'dall-e-2')).not.toThrow();
    expect(() => checkOfferingFiles([square], undefined, 'm')).not.toThrow();
    const cases: Array<[UploadedFile[], RegExp]> = [
      [[square, square], /takes at most 1 file in 'image'/],
      [[{ ...square, data: Buffer.concat([square.data, Buffer.alloc(200)]) }], /takes files of at most 200 bytes/],
      [[{ ...square, contentType: 'image/webp' }], /takes only image\/png/],
      [await probed([file('image', png(4, 2))]), /takes only square images/],
    ];
    for (const [files, message] of cases) expect(refusal(() => checkOfferingFiles(files, limits, 'dall-e-2'))).toMatchObject({ code: 'invalid_request', extra: { param: 'image' }, message });
  });
});

describe('a multipart body\'s max_total_bytes', () => {
  const spec = { files: { image: { maxBytes: 100, mime: null, min: 1, max: 16 } }, maxFields: 8, fieldMaxBytes: 100, maxTotalBytes: 250 };
  const read = (sizes: number[]) => readMultipart(Readable.from([encodeMultipart(sizes.map((n) => ({ name: 'image[]', filename: 'a.png', type: 'image/png', data: Buffer.alloc(n, 0x61) })), 'b')]), 'multipart/form-data; boundary=b', spec);

  it('takes files up to the total, and refuses the part that crosses it with 413, naming the part', async () => {
    expect((await read([100, 100, 50])).files).toHaveLength(3);
    await expect(read([100, 100, 51])).rejects.toMatchObject({ code: 'payload_too_large', extra: { param: 'image' } });
    // Each part's own limit still holds under the total.
    await expect(read([101])).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});

describe('the simulator\'s createImageEdit checks', () => {
  const form = (fields: Record<string, string>, images: Buffer[], mask: Buffer | null = null): EditForm => ({ fields, images, mask });

  it('takes gpt-image-1 with up to 16 images and dall-e-2 with one square PNG', () => {
    expect(validateEdit(form({ model: 'gpt-image-1', prompt: 'x', n: '2', input_fidelity: 'high' }, Array.from({ length: 16 }, () => png(2, 2))))).toMatchObject({ ok: true, model: 'gpt-image-1', body: { n: 2 } });
    expect(validateEdit(form({ prompt: 'x' }, [png(2, 2)], png(2, 2)))).toMatchObject({ ok: true, model: 'dall-e-2' });
  });

  it('refuses what OpenAI refuses, naming the parameter', () => {
    const cases: Array<[EditForm, string, number?]> = [
      [form({ model: 'dall-e-3', prompt: 'x' }, [png(2, 2)]), 'model'],
      [form({ model: 'gpt-image-9', prompt: 'x' }, [png(2, 2)]), 'model', 404],
      [form({ model: 'gpt-image-1', prompt: 'x' }, Array.from({ length: 17 }, () => png(2, 2))), 'image'],
      [form({ model: 'gpt-image-1', prompt: 'x' }, []), 'image'],
      [form({ model: 'dall-e-2', prompt: 'x' }, [png(4, 2)]), 'image'],
      [form({ model: 'gpt-image-1', prompt: 'x' }, [png(2, 2)], Buffer.from('GIF89a')), 'mask'],
      [form({ model: 'dall-e-2', prompt: 'x', input_fidelity: 'high' }, [png(2, 2)]), 'input_fidelity'],
      [form({ model: 'dall-e-2', prompt: 'x', size: '1536x1024' }, [png(2, 2)]), 'size'],
      [form({ model: 'gpt-image-1', prompt: 'x', style: 'vivid' }, [png(2, 2)]), 'style'],
      [form({ model: 'gpt-image-1' }, [png(2, 2)]), 'prompt'],
    ];
    for (const [f, param, status] of cases) expect(validateEdit(f), JSON.stringify(f.fields)).toMatchObject({ ok: false, param, ...(status ? { status } : {}) });
  });
});
