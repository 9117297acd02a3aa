/**
 * The flex image model end to end (spec 4.14 "Flex-type model"; issue 11 item 4): flux-2-flex on Black
 * Forest Labs' simulator through POST /v1/images/generations, over plain HTTP and the official openai
 * SDK. The job is polled inside the request, its image downloaded, sniffed, measured and kept in
 * temporary private storage (spec 8), and the client gets the gateway's signed URL (or the bytes, for
 * b64_json). Billing is the ACTUAL returned image rounded up to whole 1024x1024 units, at the offering's
 * `megapixel` price (providers/bfl.yaml: $0.06 a unit, a placeholder): 1024x1024 is 1, 1040x1024 is 2,
 * 2048x2048 is 4, and an image of another size than asked bills its own size. Every value the model
 * does not take is a 400 naming the parameter with nothing reserved; a failed, moderated, late or
 * misdirected job charges nothing and releases its hold; a polling or download URL on a foreign host
 * is refused without being called.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageDimensions } from '../../src/files/verify/dimensions.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { expectUntouched, postJson } from '../helpers/native.js';
import { componentValidator } from '../helpers/prism.js';

/** providers/bfl.yaml: $0.06 per 1024x1024 unit, in nano-USD. */
const UNIT_NANO = 60_000_000n;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_MAGIC = Buffer.from([0xff, 0xd8, 0xff]);
const PATH = '/v1/images/generations';
/** The gateway's documented answer (src/generated/openapi.json), as Prism validates it. */
const imagesResponse = componentValidator((JSON.parse(readFileSync(join(projectRoot(), 'src/generated/openapi.json'), 'utf8')) as { components: unknown }).components, 'ImagesResponse');

async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A loopback server on another port standing in for a foreign host: it must never be called. */
async function startCanary(): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => { hits += 1; res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"Ready","result":{"sample":"x"}}'); });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits, close: () => new Promise((ok) => server.close(() => ok())) };
}

describeStore('images: the flex model flux-2-flex (BFL) through the gateway', () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  let client: OpenAI;
  let canary: Awaited<ReturnType<typeof startCanary>>;

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
    canary = await startCanary();
  });
  afterAll(async () => {
    await t?.dispose();
    await canary?.close();
  });

  const balance = async (id = account.id) => (await t.settled(id))!;
  const lastRow = async (id = account.id) => (await t.usage(id, { limit: 1 })).data[0];

  it('the public catalogue lists the model as available, billed per megapixel (1024x1024 unit) at its price', async () => {
    const res = await fetch(`${t.url}/api/public/catalog`);
    const list = await res.json() as { data: Array<Record<string, unknown>> };
    expect(list.data.find((o) => o.id === 'flux-2-flex')).toEqual({
      id: 'flux-2-flex', display_name: 'flux-2-flex', provider: 'bfl', service_type: 'IMAGE', availability: 'available', billing: { unit: 'megapixel', per: 1, prices: { megapixel: '0.06' } },
    });
  });

  it('plain HTTP: a PNG at the gateway\'s signed URL, billed one unit, with the cost and quantity headers', async () => {
    const before = (await balance()).balanceNano;
    const a = await postJson(t, PATH, account.key, { model: 'flux-2-flex', prompt: 'A lighthouse at dusk.', size: '1024x1024', output_format: 'png' });
    expect(a.status).toBe(200);
    expect(a.json).toEqual({ created: expect.any(Number), data: [{ url: expect.stringContaining(t.url) }], output_format: 'png', size: '1024x1024' });
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.06');
    expect(a.headers.get('x-gateway-image-units')).toBe('1');
    expect(imagesResponse(a.json), imagesResponse.errorsText()).toBe(true);
    const image = await download(a.json.data[0].url);
    expect(image.status).toBe(200);
    expect(image.type).toBe('image/png');
    expect(image.bytes.subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(imageDimensions(image.bytes)).toEqual({ width: 1024, height: 1024 });
    expect(before - (await balance()).balanceNano).toBe(UNIT_NANO);
    expect((await balance()).openHolds).toBe(0);
    expect(await lastRow()).toMatchObject({ kind: 'images-generations', unit: 'megapixel', model: 'flux-2-flex', quantity: 1n, amountNano: UNIT_NANO });
  });

  it('the openai SDK: images.generate as JPEG (url) and as PNG inlined (b64_json)', async () => {
    const { data, response } = await client.images.generate({ model: 'flux-2-flex', prompt: 'A red kite.', size: '1024x1024', output_format: 'jpeg' }).withResponse();
    expect(data.data).toHaveLength(1);
    expect(data).toMatchObject({ output_format: 'jpeg', size: '1024x1024' });
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.06');
    const jpeg = await download(data.data![0]!.url!);
    expect(jpeg.type).toBe('image/jpeg');
    expect(jpeg.bytes.subarray(0, 3)).toEqual(JPEG_MAGIC);
    expect(imageDimensions(jpeg.bytes)).toEqual({ width: 1024, height: 1024 });
    const b64 = await client.images.generate({ model: 'flux-2-flex', prompt: 'A red kite.', size: '512x768', response_format: 'b64_json' });
    const bytes = Buffer.from(b64.data![0]!.b64_json!, 'base64');
    expect(bytes.subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(imageDimensions(bytes)).toEqual({ width: 512, height: 768 });
    expect(b64.data![0]!.url).toBeUndefined();
  });

  it('bills exact unit edges from the returned image: 1024x1024 is 1, 1040x1024 is 2, 2048x2048 is 4', async () => {
    for (const [size, units] of [['1024x1024', 1n], ['1040x1024', 2n], ['2048x2048', 4n]] as const) {
      const fresh = await t.account('1');
      const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: 'Edges.', size });
      expect(a.status, size).toBe(200);
      expect(a.json.size).toBe(size);
      expect(a.headers.get('x-gateway-image-units')).toBe(String(units));
      expect(a.headers.get('x-gateway-cost-usd')).toBe((Number(units * UNIT_NANO) / 1e9).toString());
      expect(await lastRow(fresh.id)).toMatchObject({ unit: 'megapixel', quantity: units, amountNano: units * UNIT_NANO });
      expect(await balance(fresh.id)).toMatchObject({ balanceNano: 1_000_000_000n - units * UNIT_NANO, heldNano: 0n, openHolds: 0 });
    }
  });

  it('bills the image actually returned when it differs from the requested size, larger or smaller', async () => {
    for (const [size, returned, units] of [['1024x1024', '1040x1024', 2n], ['2048x2048', '1024x1024', 1n]] as const) {
      const fresh = await t.account('1');
      const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: `Surprise sim:size=${returned}`, size });
      expect(a.status).toBe(200);
      expect(a.json.size).toBe(returned);
      expect(imageDimensions((await download(a.json.data[0].url)).bytes)).toEqual({ width: Number(returned.split('x')[0]), height: Number(returned.split('x')[1]) });
      expect(await lastRow(fresh.id)).toMatchObject({ quantity: units, amountNano: units * UNIT_NANO });
      expect(await balance(fresh.id)).toMatchObject({ balanceNano: 1_000_000_000n - units * UNIT_NANO, heldNano: 0n, openHolds: 0 });
    }
  });

  it('refuses what the flex model does not take, naming the parameter, with nothing reserved', async () => {
    const fresh = await t.account('1');
    const refusals: Array<[Record<string, unknown>, string, string]> = [
      [{ n: 2 }, 'n', 'unsupported_parameter'],
      [{ size: 'auto' }, 'size', 'unsupported_parameter'],
      [{ size: undefined }, 'size', 'invalid_request'],
      [{ size: '2064x1024' }, 'size', 'unsupported_parameter'],
      [{ size: '1000x1024' }, 'size', 'unsupported_parameter'],
      [{ size: '2048x2560' }, 'size', 'unsupported_parameter'],
      [{ size: '48x64' }, 'size', 'unsupported_parameter'],
      [{ output_format: 'webp' }, 'output_format', 'unsupported_parameter'],
      [{ quality: 'high' }, 'quality', 'unsupported_parameter'],
      [{ style: 'vivid' }, 'style', 'unsupported_parameter'],
      [{ background: 'transparent' }, 'background', 'unsupported_parameter'],
      [{ output_compression: 50 }, 'output_compression', 'unsupported_parameter'],
      [{ input_fidelity: 'high' }, 'input_fidelity', 'unsupported_parameter'],
      [{ response_format: 'png' }, 'response_format', 'unsupported_parameter'],
    ];
    for (const [over, param, code] of refusals) {
      const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: 'A cat.', size: '1024x1024', ...over });
      expect(a.status, JSON.stringify(over)).toBe(400);
      expect(a.json.error, JSON.stringify(over)).toMatchObject({ code, param });
      expect(a.json.error.message).toContain(`'${param}'`);
    }
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('a failed or moderated job charges nothing and releases the hold (Error: 502; moderated: 400 content_policy_violation)', async () => {
    const fresh = await t.account('1');
    const cases: Array<[string, number, string]> = [
      ['sim:error', 502, 'upstream_error'], ['sim:content-moderated', 400, 'content_policy_violation'], ['sim:request-moderated', 400, 'content_policy_violation'],
    ];
    for (const [marker, status, code] of cases) {
      const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: `Nothing to pay ${marker}`, size: '1024x1024' });
      expect(a.status, marker).toBe(status);
      expect(a.json.error, marker).toMatchObject({ code });
    }
    const sdk = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: fresh.key, maxRetries: 0 });
    const moderated = await sdk.images.generate({ model: 'flux-2-flex', prompt: 'x sim:content-moderated', size: '1024x1024' }).then(() => null, (e: unknown) => e);
    expect(moderated).toBeInstanceOf(OpenAI.BadRequestError);
    expect((moderated as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('content_policy_violation');
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('charges nothing when the submit, a poll or the download fails', async () => {
    const fresh = await t.account('1');
    const cases: Array<[Record<string, unknown>, string, number]> = [
      // A submission's failure on both attempts: the first and its one retry on the same deployment (issue 29).
      [{ status: 500, times: 2 }, 'bfl', 502], [{ status: 429, times: 2 }, 'bfl', 429], [{ status: 500, times: 1 }, 'bfl-result', 502],
      [{ status: 404, times: 1 }, 'bfl-delivery', 502], [{ truncate_after_chunks: 2, times: 1 }, 'bfl-delivery', 503],
    ];
    for (const [fault, key, status] of cases) {
      await t.fault(fault, key);
      const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: 'Faulty.', size: '1024x1024' });
      expect(a.status, `${key} ${JSON.stringify(fault)}`).toBe(status);
      await t.clearFaults();
    }
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('refuses a polling URL or a download URL on a foreign host without calling it; nothing charged', async () => {
    const fresh = await t.account('1');
    for (const marker of [`sim:poll-url=${canary.url}/v1/get_result?id=x`, `sim:sample-url=${canary.url}/image.png`, 'sim:sample-url=https://delivery.example.com/image.png']) {
      const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: `Elsewhere ${marker}`, size: '1024x1024' });
      expect(a.status, marker).toBe(502);
      expect(a.json.error.message, marker).toMatch(/on another host/);
    }
    expect(canary.hits()).toBe(0);
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('a task the vendor does not know ends the job: 502, nothing charged', async () => {
    const fresh = await t.account('1');
    const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: `Lost sim:poll-url=${t.sim.url}/v1/get_result?id=unknown`, size: '1024x1024' });
    expect(a.status).toBe(502);
    expect(a.json.error.message).toContain('Task not found');
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('takes no reference images and no editing: /v1/images/edits refuses the model, naming the route that serves it, with nothing reserved', async () => {
    const fresh = await t.account('1');
    const form = new FormData();
    form.append('model', 'flux-2-flex');
    form.append('prompt', 'Make it blue.');
    form.append('image', new Blob([new Uint8Array(png(64, 64))], { type: 'image/png' }), 'ref.png');
    const res = await fetch(`${t.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${fresh.key}` }, body: form });
    const body = await res.json() as { error: { code: string; param: string; message: string } };
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ param: 'model' });
    expect(body.error.message).toContain('/v1/images/generations');
    await expectUntouched(t, fresh, 1_000_000_000n);
  });

  it('the hold is the requested size\'s units: 402 before any upstream call when it does not fit', async () => {
    const poor = await t.account('0.10');
    const a = await postJson(t, PATH, poor.key, { model: 'flux-2-flex', prompt: 'Too big to hold.', size: '2048x1024' });
    expect(a.status).toBe(402);
    expect(a.json.error.message).toContain('2 megapixels');
    await expectUntouched(t, poor, 100_000_000n);
  });
});

describeStore('images: the flex model past its poll deadline', () => {
  let t: TestGateway;

  beforeAll(async () => {
    const copy = await copyConfig();
    await copy.editYaml('providers/bfl.yaml', (d) => { Object.assign(d.operations['flux-2-flex'].poll, { interval_ms: 20, deadline_ms: 300 }); });
    t = await startTestGateway({ configFile: copy.configFile });
  });
  afterAll(async () => { await t?.dispose(); });

  it('answers 504 and charges nothing when the job never ends', async () => {
    const fresh = await t.account('1');
    const started = Date.now();
    const a = await postJson(t, PATH, fresh.key, { model: 'flux-2-flex', prompt: 'Forever sim:pending', size: '1024x1024' });
    expect(a.status).toBe(504);
    expect(a.json.error).toMatchObject({ code: 'upstream_timeout' });
    expect(Date.now() - started).toBeLessThan(5000);
    await expectUntouched(t, fresh, 1_000_000_000n);
  });
});
