/**
 * Image generation (spec 4.14) beyond the golden fixtures: the engine pieces it added (the `allow`
 * parameter policy, a token meter's `output_times` and its config checks), the translator's refusals
 * of malformed answers (502, nothing charged), and the simulator's per-model checks and PNGs.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import type { CompiledOffering } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import { answerImages, simPng, validateImages } from '../../src/sim/openai-images.js';
import { applyParamPolicies } from '../../src/translate/params.js';
import { createTranslator } from '../../src/translate/registry.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

function refusal(run: () => unknown): GatewayError {
  try { run(); } catch (error) { return error as GatewayError; }
  throw new Error('accepted');
}

describe('the allow parameter policy', () => {
  const policies = { size: { allow: ['1024x1024', 'auto'] }, n: { default: 1, allow: [1] } };

  it('passes an allowed or absent value, after the default, without touching the client body', () => {
    const body = { size: 'auto' };
    expect(applyParamPolicies(body, policies, 'model "m"')).toEqual({ size: 'auto', n: 1 });
    expect(body).toEqual({ size: 'auto' });
    expect(applyParamPolicies({ size: null, n: 1 }, policies, 'x')).toEqual({ size: null, n: 1 });
  });

  it('refuses any other value with unsupported_parameter, naming the parameter, the target and the supported values', () => {
    expect(refusal(() => applyParamPolicies({ size: '256x256' }, policies, 'model "m"'))).toMatchObject({
      code: 'unsupported_parameter', status: 400, extra: { param: 'size' },
      message: 'Unsupported value for \'size\' on model "m": "256x256". Supported values: 1024x1024, auto.',
    });
    // Compared exactly: the number 2 and the string "1" are not 1.
    expect(refusal(() => applyParamPolicies({ n: 2 }, policies, 'x')).message).toBe("Unsupported value for 'n' on x: 2. Supported values: 1.");
    expect(refusal(() => applyParamPolicies({ n: '1' }, policies, 'x')).extra).toEqual({ param: 'n' });
  });
});

describe('native-json--openai-images', () => {
  const offering = (unit: string) => ({ upstreamModel: 'up', billing: { unit } }) as unknown as CompiledOffering;
  const translator = (unit: string, n = 2) => {
    const t = createTranslator('native-json', 'openai-images', { model: 'm', prompt: 'p', n }, 'm');
    t.request({ model: 'm', prompt: 'p', n }, offering(unit));
    return t;
  };
  const usage = { input_tokens: 3, output_tokens: 272, total_tokens: 275, input_tokens_details: { text_tokens: 3, image_tokens: 0 } };

  it('carries the request with the upstream model and reports tokens or images', () => {
    expect(createTranslator('native-json', 'openai-images', {}, 'm').request({ model: 'm', prompt: 'p', n: 1, size: null }, offering('image'))).toEqual({ model: 'up', prompt: 'p', n: 1 });
    expect(translator('token').response({ created: 5, data: [{ b64_json: 'AA==' }], usage }, 'm')).toMatchObject({ usage: { input: 3, output: 272 }, quantities: { images: 1 } });
    expect(translator('image', 1).response({ created: 5, data: [{ url: 'http://x/1.png', revised_prompt: 'q', extra: 1 }] }, 'm')).toEqual({
      body: { created: 5, data: [{ url: 'http://x/1.png', revised_prompt: 'q' }] }, usage: null, outputText: '', quantities: { images: 1 },
    });
  });

  it('refuses a malformed answer as the upstream\'s fault (502, nothing charged)', () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['image', { data: [] }], ['image', { data: [{ url: 'a' }, { url: 'b' }, { url: 'c' }] }], ['image', { data: [{ revised_prompt: 'q' }] }],
      ['image', {}], ['token', { data: [{ b64_json: 'AA==' }] }], ['token', { data: [{ b64_json: 'AA==' }], usage: { input_tokens: -1, output_tokens: 2 } }],
    ];
    for (const [unit, body] of cases) expect(refusal(() => translator(unit).response(body, 'm')), JSON.stringify(body)).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(refusal(() => translator('image').stream('m'))).toMatchObject({ code: 'invalid_request' });
  });
});

describe('the token meter\'s output_times', () => {
  async function refused(edit: (c: ConfigCopy) => Promise<void>): Promise<ManifestError> {
    const copy = await copyConfig();
    await edit(copy);
    const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' })).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    return error as ManifestError;
  }

  it('belongs to a token meter with a reserve, and must read the request', async () => {
    const quantity = await refused((c) => c.editYaml('routes/images-generations.yaml', (d) => { d.meter.image.output_times = { request: '/n' }; }));
    expect([quantity.path, quantity.reason]).toEqual(['/meter/image/output_times', 'output_times belongs to the token meter (`source: {translator: tokens}`)']);
    const answer = await refused((c) => c.editYaml('routes/images-generations.yaml', (d) => { d.meter.token.output_times = { upstream: '/n' }; }));
    expect([answer.path, answer.reason]).toEqual(['/meter/token/output_times', 'output_times must read the request (a count, or a constant)']);
  });
});

describe('the simulator\'s images', () => {
  it('checks each model\'s values as the vendor spec lists them', () => {
    expect(validateImages({ model: 'gpt-image-1', prompt: 'x', n: 10, size: '1536x1024', background: 'transparent', output_compression: 0 })).toMatchObject({ ok: true });
    const refused: Array<[Record<string, unknown>, string, number?]> = [
      [{ model: 'dall-e-3', prompt: 'x', n: 2 }, 'n'], [{ model: 'dall-e-3', prompt: 'x', background: 'opaque' }, 'background'],
      [{ model: 'gpt-image-1', prompt: 'x', style: 'vivid' }, 'style'], [{ model: 'gpt-image-1', prompt: 'x', quality: 'hd' }, 'quality'],
      [{ model: 'dall-e-3', prompt: 'x', output_compression: 5 }, 'output_compression'], [{ model: 'gpt-image-1', prompt: 'x', colour: 'red' }, 'colour'],
      [{ model: 'dall-e-3', prompt: 'x'.repeat(4001) }, 'prompt'], [{ model: 'dall-e-9', prompt: 'x' }, 'model', 404],
    ];
    for (const [body, param, status = 400] of refused) expect(validateImages(body), JSON.stringify(body)).toMatchObject({ ok: false, param, status });
  });

  it('draws a valid 1x1 PNG per seed, with correct chunk checksums', () => {
    const png = simPng('ff0000aabbccddee');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    let at = 8;
    const types: string[] = [];
    while (at < png.length) {
      const length = png.readUInt32BE(at);
      const typed = png.subarray(at + 4, at + 8 + length);
      expect(png.readUInt32BE(at + 8 + length)).toBe(crc32(typed));
      types.push(typed.subarray(0, 4).toString('ascii'));
      at += 12 + length;
    }
    expect(types).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(simPng('00ff00aabbccddee')).not.toEqual(png);
  });

  it('reports gpt-image-1 output tokens per image by quality and size, times n', () => {
    expect(answerImages({ prompt: 'x', n: 3, quality: 'high', size: '1024x1536' }, 'gpt-image-1', 'http://s', false).usage).toMatchObject({ output_tokens: 3 * 6240 });
    expect(answerImages({ prompt: 'x', quality: 'auto', size: 'auto' }, 'gpt-image-1', 'http://s', true).usage).toBeUndefined();
    expect(answerImages({ prompt: 'x' }, 'dall-e-3', 'http://s', false).data).toEqual([{ url: expect.stringMatching(/^http:\/\/s\/v1\/sim-images\/[0-9a-f]{16}\.png$/), revised_prompt: 'x' }]);
  });
});
