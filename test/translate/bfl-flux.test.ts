/**
 * The flex translator's edges the golden fixtures do not show (src/translate/native-json--bfl-flux):
 * a finished job without exactly one stored PNG/JPEG is the upstream's fault (502, nothing billed), the
 * vendor's FastAPI 422 becomes a 400 that says which field, and the size rule is checked when the
 * translator is created (before anything is reserved).
 */
import { describe, expect, it } from 'vitest';
import { createNativeJsonToBflFlux } from '../../src/translate/native-json--bfl-flux/index.js';
import type { GeneratedOutput } from '../../src/translate/types.js';

const output = (over: Partial<GeneratedOutput> = {}): GeneratedOutput => ({
  url: 'https://gw.example/blob', expiresAt: new Date(0), contentType: 'image/png', byteSize: 3, width: 1024, height: 1024, data: Buffer.from('png'), ...over,
});

describe('native-json--bfl-flux', () => {
  const translator = () => createNativeJsonToBflFlux({ model: 'flux-2-flex', prompt: 'x', size: '1024x1024' });

  it('refuses a finished job without exactly one PNG or JPEG output', () => {
    for (const outputs of [undefined, [], [output(), output()], [output({ contentType: 'image/webp' })], [output({ width: 0 })]]) {
      expect(() => translator().response({ status: 'Ready' }, 'flux-2-flex', {}, outputs)).toThrow(expect.objectContaining({ code: 'upstream_error', status: 502 }));
    }
  });

  it('turns the vendor\'s 422 detail into a 400 naming the field, and other errors as every translator does', () => {
    const detail = { detail: [{ loc: ['body', 'width'], msg: 'Input should be greater than or equal to 64', type: 'greater_than_equal' }] };
    expect(translator().error(422, detail, {})).toMatchObject({ code: 'invalid_request', status: 400, message: 'The upstream provider rejected the request: width: Input should be greater than or equal to 64' });
    expect(translator().error(402, { detail: 'Insufficient credits' }, {})).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(translator().error(429, { detail: 'Too many active tasks' }, { 'retry-after': '3' })).toMatchObject({ code: 'upstream_rate_limited', status: 429 });
    expect(translator().error(500, null, {})).toMatchObject({ code: 'upstream_error', status: 502 });
  });

  it('checks the size at creation, before any request is built', () => {
    expect(() => createNativeJsonToBflFlux({ model: 'flux-2-flex', prompt: 'x', size: 'auto' })).toThrow(expect.objectContaining({ code: 'unsupported_parameter' }));
    expect(() => createNativeJsonToBflFlux({ model: 'flux-2-flex', prompt: 'x' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
