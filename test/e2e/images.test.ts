/**
 * Image generation end to end (spec 4.14; spec 1: "Images: reported tokens, output image, or output
 * megapixel"; spec 8: Image n 1 to 10) with the official openai SDK's `images.generate`, unchanged:
 * gpt-image-1 billed exactly the tokens the upstream reported (n=2, input and output priced apart),
 * dall-e-3 billed one image at the catalogue's per-image price, with the settled charge in
 * X-Gateway-Cost-USD. Every value a model does not take is a 400 unsupported_parameter naming the
 * parameter and the supported values, with nothing reserved; an upstream fault charges nothing; the
 * hold is the model's per-image output allowance times n (a 402 when it does not fit).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countTextTokens } from '../../src/tokenize.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson } from '../helpers/native.js';

/** providers/openai.yaml: gpt-image-1 $5 input and $40 output per 1M tokens (nano-USD per token); dall-e-3 $0.04 per image. */
const INPUT_NANO = 5_000n;
const OUTPUT_NANO = 40_000n;
const IMAGE_NANO = 40_000_000n;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describeStore('images: the openai SDK images.generate against the gateway', () => {
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
  const lastUpstreamBody = async (): Promise<any> => ((await (await fetch(`${t.sim.url}/__sim/last`)).json()) as { body: unknown }).body;

  it('gpt-image-1, n=2: two base64 PNGs, billed exactly the reported tokens', async () => {
    const before = (await balance()).balanceNano;
    const prompt = 'Two red squares on a white background.';
    const { data, response } = await client.images.generate({ model: 'gpt-image-1', prompt, n: 2, size: '1024x1536', quality: 'low', output_format: 'png' }).withResponse();
    expect(await lastUpstreamBody()).toEqual({ model: 'gpt-image-1', prompt, n: 2, size: '1024x1536', quality: 'low', output_format: 'png' });
    expect(data.data).toHaveLength(2);
    for (const image of data.data!) expect(Buffer.from(image.b64_json!, 'base64').subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(data.data![0]!.b64_json).not.toBe(data.data![1]!.b64_json);
    const usage = data.usage!;
    expect(usage.input_tokens).toBe(countTextTokens(prompt));
    expect(usage.output_tokens).toBe(2 * 408);
    expect(data).toMatchObject({ size: '1024x1536', quality: 'low', output_format: 'png' });
    const charge = BigInt(usage.input_tokens) * INPUT_NANO + BigInt(usage.output_tokens) * OUTPUT_NANO;
    const after = await balance();
    expect(before - after.balanceNano).toBe(charge);
    expect(after.openHolds).toBe(0);
    expect(response.headers.get('x-gateway-cost-usd')).toBe((Number(charge) / 1e9).toString());
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(row).toMatchObject({ kind: 'tokens', unit: 'token', model: 'gpt-image-1', quantity: BigInt(usage.input_tokens + usage.output_tokens), amountNano: charge });
  });

  it('dall-e-3: one image billed at the per-image price, as a URL on the simulator or as base64', async () => {
    const before = (await balance()).balanceNano;
    const { data, response } = await client.images.generate({ model: 'dall-e-3', prompt: 'A lighthouse at dusk.', style: 'natural' }).withResponse();
    expect(data.usage).toBeUndefined();
    expect(data.data).toHaveLength(1);
    expect(data.data![0]!.revised_prompt).toBe('A lighthouse at dusk.');
    const png = await fetch(data.data![0]!.url!);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer()).subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.04');
    expect(response.headers.get('x-gateway-images')).toBe('1');
    expect(before - (await balance()).balanceNano).toBe(IMAGE_NANO);
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(row).toMatchObject({ kind: 'images-generations', unit: 'image', model: 'dall-e-3', quantity: 1n, amountNano: IMAGE_NANO });
    const b64 = await client.images.generate({ model: 'dall-e-3', prompt: 'A lighthouse at dusk.', response_format: 'b64_json', size: '1024x1024', quality: 'standard' });
    expect(Buffer.from(b64.data![0]!.b64_json!, 'base64')).toEqual(Buffer.from(await (await fetch(data.data![0]!.url!)).arrayBuffer()));
    expect(before - (await balance()).balanceNano).toBe(2n * IMAGE_NANO);
  });

  it('refuses every value a model does not take, naming the parameter and the supported values, with nothing reserved', async () => {
    const fresh = await t.account('1');
    const refusals: Array<[Record<string, unknown>, string, string | null]> = [
      [{ model: 'gpt-image-1', size: '1792x1024' }, 'size', '1024x1024, 1536x1024, 1024x1536, auto'],
      [{ model: 'gpt-image-1', quality: 'hd' }, 'quality', 'low, medium, high, auto'],
      [{ model: 'gpt-image-1', background: 'white' }, 'background', 'transparent, opaque, auto'],
      [{ model: 'gpt-image-1', output_format: 'gif' }, 'output_format', 'png, jpeg, webp'],
      [{ model: 'gpt-image-1', style: 'vivid' }, 'style', null],
      [{ model: 'gpt-image-1', response_format: 'url' }, 'response_format', null],
      [{ model: 'dall-e-3', n: 2 }, 'n', '1'],
      // dall-e-3 takes every size and quality it is priced at (issue 31 item 8); others name the priced combinations.
      [{ model: 'dall-e-3', size: '512x512' }, 'size', null],
      [{ model: 'dall-e-3', quality: 'low' }, 'quality', null],
      [{ model: 'dall-e-3', style: 'dramatic' }, 'style', 'vivid, natural'],
      [{ model: 'dall-e-3', response_format: 'png' }, 'response_format', 'url, b64_json'],
      [{ model: 'dall-e-3', background: 'transparent' }, 'background', null],
      [{ model: 'dall-e-3', output_format: 'png' }, 'output_format', null],
      [{ model: 'dall-e-3', output_compression: 50 }, 'output_compression', null],
      [{ model: 'gpt-image-1', input_fidelity: 'high' }, 'input_fidelity', null],
    ];
    for (const [body, param, supported] of refusals) {
      const a = await postJson(t, '/v1/images/generations', fresh.key, { prompt: 'A cat.', ...body });
      expect(a.status, JSON.stringify(body)).toBe(400);
      expect(a.json.error, JSON.stringify(body)).toMatchObject({ code: 'unsupported_parameter', param });
      expect(a.json.error.message).toContain(`'${param}'`);
      if (supported) expect(a.json.error.message).toContain(`Supported values: ${supported}.`);
    }
    // Spec 8: n is 1 to 10; the SDK surfaces the refusal as a BadRequestError naming the parameter.
    const many = await client.images.generate({ model: 'gpt-image-1', prompt: 'A cat.', n: 11 }).then(() => null, (e: unknown) => e);
    expect(many).toBeInstanceOf(OpenAI.BadRequestError);
    expect((many as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n');
    const other = await postJson(t, '/v1/images/generations', fresh.key, { model: 'gpt-4o-mini', prompt: 'A cat.' });
    expect(other.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('charges nothing when the upstream fails, the answer is cut, or usage is missing', async () => {
    const fresh = await t.account('1');
    const body = { model: 'gpt-image-1', prompt: 'Nothing to pay.', n: 2 };
    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{ status: 500 }, 'gpt-image-1', 502], [{ status: 429 }, 'gpt-image-1', 429], [{ status: 400 }, 'dall-e-3', 400],
      // A body cut with the socket destroyed: the upstream could not be reached (503); a 200 whose JSON
      // stops early is malformed (502); so is a token model's answer without usage.
      [{ truncate_after_chunks: 2 }, 'gpt-image-1', 503], [{ error_after_chunks: 2 }, 'dall-e-3', 502], [{ omit_usage: true }, 'gpt-image-1', 502],
    ];
    for (const [fault, model, status] of cases) {
      await t.fault(fault, model);
      try {
        const a = await postJson(t, '/v1/images/generations', fresh.key, { ...body, model, n: model === 'dall-e-3' ? 1 : 2 });
        expect(a.status, JSON.stringify([fault, a.json])).toBe(status);
      } finally {
        await t.clearFaults();
      }
    }
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('holds the per-image output allowance times n: a 402 when n images do not fit, one image fits', async () => {
    // gpt-image-1's hold: 6240 output tokens per image at $40 per 1M = $0.2496 per image, plus the prompt.
    const poor = await t.account('0.30');
    const two = await postJson(t, '/v1/images/generations', poor.key, { model: 'gpt-image-1', prompt: 'A cat.', n: 2 });
    expect(two.status).toBe(402);
    expect(two.json.error.code).toBe('insufficient_balance');
    expect(two.json.error.message).toContain('12480 output tokens');
    await expectUntouched(t, poor, 300_000_000n);
    const one = await postJson(t, '/v1/images/generations', poor.key, { model: 'gpt-image-1', prompt: 'A cat.', quality: 'high', size: '1024x1536' });
    expect(one.status).toBe(200);
    // The worst case of one image (high, 1024x1536) settles within its hold.
    expect(one.json.usage.output_tokens).toBe(6240);
    expect(await balance(poor.id)).toMatchObject({ heldNano: 0n, openHolds: 0 });
  });
});
