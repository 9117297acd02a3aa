/**
 * Image edits end to end (spec 4.14; spec 1 "Images: reported tokens, output image, or output
 * megapixel"; spec 8 "Image references per edit: 16, plus one mask") with the official openai SDK's
 * `images.edit`, unchanged: one image (sent as `image`) and several (sent as `image[]`) with a mask,
 * gpt-image-1 billed exactly the reported tokens with the image input tokens at the image-input price
 * ($10 per 1M against $5 for text), dall-e-2 billed per output image; JSON with a finalized
 * IMAGE_REFERENCE temporary file; and every refusal (dall-e-3 with the endpoint that serves it, 17
 * images, a file that is not an image, JSON with style, response_format or mask, JSON without a file)
 * a 400 naming the parameter with nothing reserved or charged; a reused X-Gateway-Operation-ID answers
 * the same edit, charged once.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SIM_EDIT_IMAGE_TOKENS } from '../../src/sim/openai-image-edits.js';
import { countTextTokens } from '../../src/tokenize.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { expectUntouched, postJson } from '../helpers/native.js';

/** providers/openai.yaml gpt-image-1, nano-USD per token: text input $5, image input $10, output $40 per 1M. */
const TEXT_NANO = 5_000n;
const IMAGE_INPUT_NANO = 10_000n;
const OUTPUT_NANO = 40_000n;
/** dall-e-2: $0.02 per image. */
const DALL_E_2_NANO = 20_000_000n;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describeStore(`images: the openai SDK images.edit against the gateway (${storeKind})`, () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const balance = async (id = account.id) => (await t.settled(id))!;
  const lastUpstream = async (): Promise<{ path: string; headers: Record<string, string>; body: unknown }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; headers: Record<string, string>; body: unknown }>;
  /** The part names of the last upstream multipart body, in order. */
  const upstreamParts = async (): Promise<string[]> => {
    const raw = (await lastUpstream()).body;
    return [...String(raw).matchAll(/; name="([^"]+)"/g)].map((m) => m[1]!);
  };
  const form = (fields: Record<string, string>, files: Array<[string, Buffer, string]>): FormData => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    for (const [name, data, type] of files) f.append(name, new Blob([new Uint8Array(data)], { type }), `${name.replace('[]', '')}.png`);
    return f;
  };
  const postForm = async (key: string, body: FormData): Promise<{ status: number; headers: Headers; json: any }> => {
    const res = await fetch(`${t.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
    return { status: res.status, headers: res.headers, json: await res.json() };
  };
  /** Spec 4.7: authorize, PUT with exactly the returned method and headers, finalize. */
  async function temporaryFile(key: string, purpose: string, contentType: string, bytes: Buffer): Promise<string> {
    const a = await postJson(t, '/v1/gateway/files/upload-authorizations', key, { purpose, content_type: contentType, byte_size: bytes.length });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const put = await fetch(a.json.upload_url, { method: a.json.method, headers: a.json.headers, body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    const f = await postJson(t, `/v1/gateway/files/${a.json.file_id}/finalize`, key, undefined);
    expect(f.status, JSON.stringify(f.json)).toBe(200);
    return a.json.file_id as string;
  }
  /** gpt-image-1's exact charge: text input, image input and output at their own prices (one rounding, exact here). */
  const tokenCharge = (usage: { input_tokens: number; output_tokens: number; input_tokens_details?: { image_tokens?: number } }): bigint => {
    const image = BigInt(usage.input_tokens_details?.image_tokens ?? 0);
    return (BigInt(usage.input_tokens) - image) * TEXT_NANO + image * IMAGE_INPUT_NANO + BigInt(usage.output_tokens) * OUTPUT_NANO;
  };

  it('gpt-image-1, one image: sent upstream as `image`, image input tokens billed at the image-input price', async () => {
    const before = (await balance()).balanceNano;
    const prompt = 'Make the square blue.';
    const image = await toFile(png(8, 8, 1), 'square.png', { type: 'image/png' });
    const { data, response } = await client.images.edit({ model: 'gpt-image-1', image, prompt, quality: 'low', input_fidelity: 'high' }).withResponse();
    expect(await upstreamParts()).toEqual(['model', 'image', 'prompt', 'n', 'quality', 'input_fidelity']);
    expect((await lastUpstream()).path).toBe('/v1/images/edits');
    expect(data.data).toHaveLength(1);
    expect(Buffer.from(data.data![0]!.b64_json!, 'base64').subarray(0, 8)).toEqual(PNG_MAGIC);
    const usage = data.usage!;
    const text = countTextTokens(prompt);
    expect(usage.input_tokens_details).toEqual({ text_tokens: text, image_tokens: SIM_EDIT_IMAGE_TOKENS.high });
    expect(usage.input_tokens).toBe(text + SIM_EDIT_IMAGE_TOKENS.high);
    expect(usage.output_tokens).toBe(272);
    const charge = tokenCharge(usage);
    // Not the plain-input charge: the image tokens cost twice as much.
    expect(charge).toBe(BigInt(text) * TEXT_NANO + BigInt(SIM_EDIT_IMAGE_TOKENS.high) * IMAGE_INPUT_NANO + 272n * OUTPUT_NANO);
    const after = await balance();
    expect(before - after.balanceNano).toBe(charge);
    expect(after.openHolds).toBe(0);
    expect(response.headers.get('x-gateway-cost-usd')).toBe((Number(charge) / 1e9).toString());
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(row).toMatchObject({ kind: 'tokens', unit: 'token', model: 'gpt-image-1', quantity: BigInt(usage.input_tokens + usage.output_tokens), amountNano: charge });
    expect(row!.details).toMatchObject({ input: usage.input_tokens, output: 272, image_input: SIM_EDIT_IMAGE_TOKENS.high });
  });

  it('gpt-image-1, several images and a mask: sent upstream as `image[]` each, n=2, billed exactly', async () => {
    const before = (await balance()).balanceNano;
    const images = await Promise.all([1, 2, 3].map((seed) => toFile(png(8, 8, seed), `in-${seed}.png`, { type: 'image/png' })));
    const mask = await toFile(png(8, 8, 9), 'mask.png', { type: 'image/png' });
    const { data, response } = await client.images.edit({ model: 'gpt-image-1', image: images, mask, prompt: 'Blend them.', n: 2, size: '1024x1536', quality: 'medium' }).withResponse();
    expect(await upstreamParts()).toEqual(['model', 'image[]', 'image[]', 'image[]', 'mask', 'prompt', 'n', 'size', 'quality']);
    expect(data.data).toHaveLength(2);
    const usage = data.usage!;
    expect(usage.input_tokens_details!.image_tokens).toBe(3 * SIM_EDIT_IMAGE_TOKENS.low);
    expect(usage.output_tokens).toBe(2 * 1584);
    const charge = tokenCharge(usage);
    expect(before - (await balance()).balanceNano).toBe(charge);
    expect(response.headers.get('x-gateway-cost-usd')).toBe((Number(charge) / 1e9).toString());
  });

  it('takes `image` repeated or `image[]` from a plain form: both reach the vendor as `image[]`', async () => {
    for (const name of ['image', 'image[]']) {
      const a = await postForm(account.key, form({ model: 'gpt-image-1', prompt: 'Two.' }, [[name, png(4, 4, 1), 'image/png'], [name, png(4, 4, 2), 'image/jpeg']]));
      // A declared type is the client's word: the bytes are a PNG, and that is what is sent.
      expect(a.status, JSON.stringify(a.json)).toBe(200);
      expect(await upstreamParts()).toEqual(['model', 'image[]', 'image[]', 'prompt', 'n']);
      expect(String((await lastUpstream()).body)).not.toContain('image/jpeg');
    }
  });

  it('dall-e-2: one square PNG, billed per output image with X-Gateway-Images and the cost header', async () => {
    const before = (await balance()).balanceNano;
    const { data, response } = await client.images.edit({ model: 'dall-e-2', image: await toFile(png(16, 16, 3), 'a.png', { type: 'image/png' }), prompt: 'A hat.', n: 3, size: '1024x1024', response_format: 'b64_json' }).withResponse();
    expect(data.usage).toBeUndefined();
    expect(data.data).toHaveLength(3);
    expect(response.headers.get('x-gateway-images')).toBe('3');
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.06');
    expect(before - (await balance()).balanceNano).toBe(3n * DALL_E_2_NANO);
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(row).toMatchObject({ kind: 'images-edits', unit: 'image', model: 'dall-e-2', quantity: 3n, amountNano: 3n * DALL_E_2_NANO });
    // The default answer is a URL on the simulator.
    const url = await client.images.edit({ model: 'dall-e-2', image: await toFile(png(16, 16, 3), 'a.png', { type: 'image/png' }), prompt: 'A hat.' });
    expect(Buffer.from(await (await fetch(url.data![0]!.url!)).arrayBuffer()).subarray(0, 8)).toEqual(PNG_MAGIC);
  });

  it('dall-e-2 also generates, at the same per-image price (its offering lists no operations: all of them)', async () => {
    const owner = await t.account('1');
    const a = await postJson(t, '/v1/images/generations', owner.key, { model: 'dall-e-2', prompt: 'A hat.', n: 2, response_format: 'b64_json' });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json.data).toHaveLength(2);
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.04');
    expect((await balance(owner.id)).balanceNano).toBe(1_000_000_000n - 2n * DALL_E_2_NANO);
  });

  it('JSON with a finalized IMAGE_REFERENCE file_id: the file goes upstream as the `image` part', async () => {
    const owner = await t.account('1');
    const id = await temporaryFile(owner.key, 'IMAGE_REFERENCE', 'image/png', png(8, 8, 5));
    const a = await postJson(t, '/v1/images/edits', owner.key, { model: 'gpt-image-1', file_id: id, prompt: 'Brighter.', quality: 'low', output_format: 'webp' });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json.output_format).toBe('webp');
    expect(await upstreamParts()).toEqual(['model', 'image', 'prompt', 'n', 'quality', 'output_format']);
    expect((await lastUpstream()).headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const charge = tokenCharge(a.json.usage);
    expect(a.headers.get('x-gateway-cost-usd')).toBe((Number(charge) / 1e9).toString());
    expect((await balance(owner.id)).balanceNano).toBe(1_000_000_000n - charge);
  });

  it('refuses with a 400 naming the parameter, before anything is reserved', async () => {
    const refused = await t.account('1');
    const one = png(8, 8, 1);
    const reference = await temporaryFile(refused.key, 'IMAGE_REFERENCE', 'image/png', one);
    const vision = await temporaryFile(refused.key, 'VISION_INPUT', 'image/png', one);
    const seventeen: Array<[string, Buffer, string]> = Array.from({ length: 17 }, (_, i) => ['image[]', png(4, 4, i), 'image/png']);
    const cases: Array<[string, () => Promise<{ status: number; json: any }>, string, string, string?]> = [
      ['dall-e-3 cannot edit', () => postForm(refused.key, form({ model: 'dall-e-3', prompt: 'x' }, [['image', one, 'image/png']])), 'model', 'invalid_request', '/v1/images/generations'],
      ['17 images', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x' }, seventeen)), 'image', 'invalid_request', '16'],
      ['a declared GIF', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x' }, [['image', one, 'image/gif']])), 'image', 'invalid_request', 'image/png'],
      ['text bytes declared PNG', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x' }, [['image', Buffer.from('not an image'), 'image/png']])), 'image', 'invalid_request'],
      ['a JPEG mask', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x' }, [['image', one, 'image/png'], ['mask', one, 'image/jpeg']])), 'mask', 'invalid_request'],
      ['no image', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x' }, [])), 'image', 'invalid_request'],
      ['style', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x', style: 'vivid' }, [['image', one, 'image/png']])), 'style', 'unsupported_parameter'],
      ['gpt-image-1 response_format', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x', response_format: 'url' }, [['image', one, 'image/png']])), 'response_format', 'unsupported_parameter'],
      ['gpt-image-1 input_fidelity', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x', input_fidelity: 'max' }, [['image', one, 'image/png']])), 'input_fidelity', 'unsupported_parameter', 'high, low'],
      ['dall-e-2 two images', () => postForm(refused.key, form({ model: 'dall-e-2', prompt: 'x' }, [['image[]', one, 'image/png'], ['image[]', one, 'image/png']])), 'image', 'invalid_request', 'at most 1 file'],
      ['dall-e-2 not square', () => postForm(refused.key, form({ model: 'dall-e-2', prompt: 'x' }, [['image', png(8, 4), 'image/png']])), 'image', 'invalid_request', 'square'],
      // dall-e-2 edits at each size it is priced at (issue 31 item 8); another size names the priced ones.
      ['dall-e-2 size', () => postForm(refused.key, form({ model: 'dall-e-2', prompt: 'x', size: '1536x1024' }, [['image', one, 'image/png']])), 'size', 'unsupported_parameter', 'size 256x256 ($0.016); size 512x512 ($0.018); size 1024x1024 ($0.02)'],
      ['dall-e-2 input_fidelity', () => postForm(refused.key, form({ model: 'dall-e-2', prompt: 'x', input_fidelity: 'high' }, [['image', one, 'image/png']])), 'input_fidelity', 'unsupported_parameter'],
      ['n 11', () => postForm(refused.key, form({ model: 'gpt-image-1', prompt: 'x', n: '11' }, [['image', one, 'image/png']])), 'n', 'invalid_request'],
      ['JSON style', () => postJson(t, '/v1/images/edits', refused.key, { model: 'gpt-image-1', file_id: reference, prompt: 'x', style: 'vivid' }), 'style', 'unsupported_parameter', 'JSON'],
      ['JSON response_format', () => postJson(t, '/v1/images/edits', refused.key, { model: 'dall-e-2', file_id: reference, prompt: 'x', response_format: 'url' }), 'response_format', 'unsupported_parameter', 'JSON'],
      ['JSON mask', () => postJson(t, '/v1/images/edits', refused.key, { model: 'gpt-image-1', file_id: reference, prompt: 'x', mask: reference }), 'mask', 'unsupported_parameter', 'JSON'],
      ['JSON without file_id', () => postJson(t, '/v1/images/edits', refused.key, { model: 'gpt-image-1', prompt: 'x' }), 'image', 'invalid_request', 'file_id'],
      ['JSON with a VISION_INPUT file', () => postJson(t, '/v1/images/edits', refused.key, { model: 'gpt-image-1', file_id: vision, prompt: 'x' }), 'file_id', 'file_purpose_mismatch'],
      ['a chat model', () => postForm(refused.key, form({ model: 'gpt-4o-mini', prompt: 'x' }, [['image', one, 'image/png']])), 'model', 'model_not_available'],
    ];
    for (const [name, call, param, code, mention] of cases) {
      const a = await call();
      expect(a.status, `${name}: ${JSON.stringify(a.json)}`).toBe(400);
      expect(a.json.error, name).toMatchObject({ param, code });
      if (mention) expect(a.json.error.message, name).toContain(mention);
    }
    // The SDK surfaces the dall-e-3 refusal as a BadRequestError naming the model.
    const e = await client.images.edit({ model: 'dall-e-3', image: await toFile(one, 'a.png', { type: 'image/png' }), prompt: 'x' }).then(() => null, (error: unknown) => error);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
    await expectUntouched(t, refused, 1_000_000_000n);
  });

  it('X-Gateway-Operation-ID: a reused id answers the same edit again, charged once', async () => {
    const owner = await t.account('1');
    const send = (prompt: string) => fetch(`${t.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${owner.key}`, 'x-gateway-operation-id': 'op-edit-1' }, body: form({ model: 'dall-e-2', prompt, response_format: 'b64_json' }, [['image', png(8, 8, 7), 'image/png']]) });
    const first = await send('A scarf.');
    expect(first.status).toBe(200);
    const again = await send('Anything else.');
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    expect((await balance(owner.id)).balanceNano).toBe(1_000_000_000n - DALL_E_2_NANO);
  });

  it('charges nothing when the upstream fails or a token answer lacks usage', async () => {
    const fresh = await t.account('1');
    for (const [fault, model, status] of [[{ status: 500 }, 'gpt-image-1', 502], [{ status: 400 }, 'dall-e-2', 400], [{ omit_usage: true }, 'gpt-image-1', 502]] as const) {
      await t.fault(fault, model);
      try {
        const a = await postForm(fresh.key, form({ model, prompt: 'Nothing to pay.' }, [['image', png(8, 8), 'image/png']]));
        expect(a.status, JSON.stringify([fault, a.json])).toBe(status);
      } finally {
        await t.clearFaults();
      }
    }
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('holds the prompt, a bound per input image and the output allowance times n: 402 when it does not fit', async () => {
    // 16 images x 8192 tokens at $10 per 1M = $1.31 of input alone; plus 6240 output tokens at $40 per 1M.
    const poor = await t.account('1');
    const many: Array<[string, Buffer, string]> = Array.from({ length: 16 }, (_, i) => ['image[]', png(4, 4, i), 'image/png']);
    const refused = await postForm(poor.key, form({ model: 'gpt-image-1', prompt: 'x' }, many));
    expect(refused.status, JSON.stringify(refused.json)).toBe(402);
    await expectUntouched(t, poor, 1_000_000_000n);
    const fits = await postForm(poor.key, form({ model: 'gpt-image-1', prompt: 'x' }, many.slice(0, 4)));
    expect(fits.status, JSON.stringify(fits.json)).toBe(200);
    expect(fits.json.usage.input_tokens_details.image_tokens).toBe(4 * SIM_EDIT_IMAGE_TOKENS.low);
    expect(await balance(poor.id)).toMatchObject({ heldNano: 0n, openHolds: 0 });
  });
});
