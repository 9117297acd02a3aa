/**
 * The two embeddings translators beyond their golden fixtures: what native-json--cohere-embed refuses
 * at creation (spec 4.15), how it maps dimensions, shortens 768 and pads 2048, the answers both treat as malformed
 * (502, nothing charged), the quantity they report, and how upstream errors reach the client.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import {
  createNativeJsonToCohereEmbed, decodeFloat32, embedDimensions, embedTexts, encodeFloat32, pad, shorten,
} from '../../src/translate/native-json--cohere-embed/index.js';
import { createNativeJsonToOpenaiEmbeddings, embeddingInputCount } from '../../src/translate/native-json--openai-embeddings/index.js';

const offering = { id: 'embed-pro', upstreamModel: 'embed-v4.0' } as CompiledOffering;
const caught = (fn: () => unknown): GatewayError => {
  try { fn(); } catch (e) { return e as GatewayError; }
  throw new Error('did not throw');
};
const unit = (n: number): number[] => Array.from({ length: n }, (_, i) => Math.fround(1 / Math.sqrt(n) * (i % 2 ? -1 : 1)));
const cohereAnswer = (embeddings: Record<string, unknown>, billed: unknown = 3) => ({ embeddings, meta: { billed_units: { input_tokens: billed } } });

describe('native-json--cohere-embed', () => {
  it('refuses token ids, images and mixed lists (unsupported_parameter), too many or empty texts (invalid_request), all naming input', () => {
    const refusals: Array<[unknown, string, RegExp]> = [
      [[1, 2, 3], 'unsupported_parameter', /token-id arrays/],
      [[[1], [2]], 'unsupported_parameter', /token-id arrays/],
      [['text', 7], 'unsupported_parameter', /token-id arrays/],
      ['data:image/png;base64,AAAA', 'unsupported_parameter', /images \(data URIs\)/],
      ['DATA:,plain', 'unsupported_parameter', /images \(data URIs\)/],
      [['a cat', 'data:image/webp;base64,AAAA'], 'unsupported_parameter', /mixing texts and images/],
      [Array.from({ length: 97 }, () => 'x'), 'invalid_request', /at most 96 texts .* \(97 were sent\)/],
      [['x', ''], 'invalid_request', /empty text/],
    ];
    for (const [input, code, message] of refusals) {
      const e = caught(() => createNativeJsonToCohereEmbed({ model: 'embed-pro', input }));
      expect(e, JSON.stringify(input).slice(0, 60)).toBeInstanceOf(GatewayError);
      expect([e.code, e.status, e.extra.param]).toEqual([code, 400, 'input']);
      expect(e.message).toMatch(message);
    }
    // Text that merely starts like a data URI is text.
    expect(embedTexts(['Data: 42 rows', 'data:image is a word', 'x'.repeat(10)])).toHaveLength(3);
    expect(embedTexts(Array.from({ length: 96 }, () => 'x'))).toHaveLength(96);
  });

  it('maps each dimension of the 4.15 table to the output_dimension that serves it (2048 from 1536); others refused naming dimensions', () => {
    expect([undefined, 256, 512, 768, 1024, 1536, 2048].map((d) => embedDimensions(d))).toEqual([
      { requested: 1536, upstream: 1536 }, { requested: 256, upstream: 256 }, { requested: 512, upstream: 512 },
      { requested: 768, upstream: 1024 }, { requested: 1024, upstream: 1024 }, { requested: 1536, upstream: 1536 },
      { requested: 2048, upstream: 1536 },
    ]);
    for (const d of [0, 100, 3072, 1536.5, '1536']) expect(caught(() => embedDimensions(d))).toMatchObject({ code: 'invalid_request', extra: { param: 'dimensions' } });
  });

  it('sends texts as documents, never truncated, in the encoding asked for', () => {
    const t = createNativeJsonToCohereEmbed({ model: 'embed-pro', input: 'hi', dimensions: 768, encoding_format: 'base64' });
    expect(t.request({}, offering)).toEqual({ model: 'embed-v4.0', texts: ['hi'], input_type: 'search_document', embedding_types: ['base64'], output_dimension: 1024, truncate: 'NONE' });
  });

  it('shortens a 1024 embedding to a 768 unit vector, the same in float and base64', () => {
    const full = unit(1024).map((v, i) => Math.fround(v * (1 + (i % 7) / 10)));
    const floats = createNativeJsonToCohereEmbed({ model: 'embed-pro', input: ['a'], dimensions: 768 }).response(cohereAnswer({ float: [full] }), 'embed-pro');
    const packed = createNativeJsonToCohereEmbed({ model: 'embed-pro', input: ['a'], dimensions: 768, encoding_format: 'base64' }).response(cohereAnswer({ base64: [encodeFloat32(full)] }), 'embed-pro');
    const vector = (floats.body.data as Array<{ embedding: number[] }>)[0]!.embedding;
    expect(vector).toHaveLength(768);
    expect(Math.sqrt(vector.reduce((s, v) => s + v * v, 0))).toBeCloseTo(1, 6);
    expect(vector).toEqual(shorten(full, 768));
    expect(decodeFloat32((packed.body.data as Array<{ embedding: string }>)[0]!.embedding, 768)).toEqual(vector);
    expect(floats).toMatchObject({ usage: null, quantities: { input_tokens: 3 }, body: { usage: { prompt_tokens: 3, total_tokens: 3 } } });
  });

  it('pads a 1536 embedding to 2048 with zeros: the same dot products and norms, the same in float and base64', () => {
    const full = unit(1536).map((v, i) => Math.fround(v * (1 + (i % 5) / 10)));
    const other = unit(1536).map((v, i) => Math.fround(v * (i % 3 ? 1 : -1)));
    const floats = createNativeJsonToCohereEmbed({ model: 'embed-fast', input: ['a', 'b'], dimensions: 2048 }).response(cohereAnswer({ float: [full, other] }), 'embed-fast');
    const packed = createNativeJsonToCohereEmbed({ model: 'embed-fast', input: ['a', 'b'], dimensions: 2048, encoding_format: 'base64' })
      .response(cohereAnswer({ base64: [encodeFloat32(full), encodeFloat32(other)] }), 'embed-fast');
    const [a, b] = (floats.body.data as Array<{ embedding: number[] }>).map((d) => d.embedding) as [number[], number[]];
    expect(a).toHaveLength(2048);
    expect(a.slice(0, 1536)).toEqual(full);
    expect(a.slice(1536)).toEqual(Array(512).fill(0));
    const dot = (x: number[], y: number[]): number => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(dot(a, b)).toBe(dot(full, other));
    expect(dot(a, a)).toBe(dot(full, full));
    expect((packed.body.data as Array<{ embedding: string }>).map((d) => decodeFloat32(d.embedding, 2048))).toEqual([a, b]);
    expect(pad(full, 2048)).toEqual(a);
    // Billed as the 1536 request: the tokens Cohere bills.
    expect(floats).toMatchObject({ usage: null, quantities: { input_tokens: 3 }, body: { usage: { prompt_tokens: 3, total_tokens: 3 } } });
    // A 2048 request still expects 1536 values from Cohere: 2048 upstream values are malformed.
    expect(caught(() => createNativeJsonToCohereEmbed({ model: 'embed-fast', input: ['a'], dimensions: 2048 }).response(cohereAnswer({ float: [unit(2048)] }), 'embed-fast')))
      .toMatchObject({ code: 'upstream_error', status: 502 });
  });

  it('treats a wrong count, a wrong size, bad base64 or a missing billed count as a malformed answer (upstream_error)', () => {
    const make = (encoding_format: string) => createNativeJsonToCohereEmbed({ model: 'embed-pro', input: ['a', 'b'], dimensions: 256, encoding_format });
    const answers: Array<[string, unknown]> = [
      ['float', cohereAnswer({ float: [unit(256)] })],
      ['float', cohereAnswer({ float: [unit(256), unit(255)] })],
      ['float', cohereAnswer({ float: [unit(256), [...unit(255), 'x']] })],
      ['float', cohereAnswer({ base64: [encodeFloat32(unit(256)), encodeFloat32(unit(256))] })],
      ['base64', cohereAnswer({ base64: [encodeFloat32(unit(256)), encodeFloat32(unit(128))] })],
      ['base64', cohereAnswer({ base64: [encodeFloat32(unit(256)), `!${encodeFloat32(unit(256)).slice(1)}`] })],
      ['float', { embeddings: { float: [unit(256), unit(256)] }, meta: { billed_units: {} } }],
      ['float', cohereAnswer({ float: [unit(256), unit(256)] }, -1)],
      ['float', { embeddings: { float: [unit(256), unit(256)] } }],
    ];
    for (const [format, answer] of answers) {
      expect(caught(() => make(format).response(answer as Record<string, unknown>, 'embed-pro')), JSON.stringify(answer).slice(0, 80)).toMatchObject({ code: 'upstream_error', status: 502 });
    }
    // A fractional billed count is billed, and shown, rounded up.
    expect(make('float').response(cohereAnswer({ float: [unit(256), unit(256)] }, 2.5), 'embed-pro')).toMatchObject({ quantities: { input_tokens: 2.5 }, body: { usage: { prompt_tokens: 3 } } });
  });

  it('turns a Cohere 400 into a 400 naming input (the texts are the only thing the client chose); other statuses as usual', () => {
    const t = createNativeJsonToCohereEmbed({ model: 'embed-pro', input: 'hi' });
    expect(t.error(400, { id: 'x', message: 'invalid request: texts[0] is too long' }, {})).toMatchObject({ code: 'invalid_request', status: 400, message: 'invalid request: texts[0] is too long', extra: { param: 'input' } });
    expect(t.error(429, { message: 'slow down' }, { 'retry-after': '7' })).toMatchObject({ code: 'upstream_rate_limited', status: 429 });
    expect(t.error(401, { message: 'invalid api token' }, {})).toMatchObject({ code: 'upstream_error' });
    expect(t.error(503, null, {})).toMatchObject({ code: 'upstream_error', status: 502 });
  });
});

describe('native-json--openai-embeddings', () => {
  it('counts the embeddings an input asks for, refusing mixed lists naming input', () => {
    expect(['x', ['x', 'y'], [1, 2], [[1], [2, 3], [4]]].map(embeddingInputCount)).toEqual([1, 2, 1, 3]);
    for (const input of [['x', 1], [[1], 'x'], [[1], 2]]) expect(caught(() => embeddingInputCount(input))).toMatchObject({ code: 'invalid_request', extra: { param: 'input' } });
  });

  it('carries the request as is under the upstream model id, without absent or null fields', () => {
    const t = createNativeJsonToOpenaiEmbeddings({ model: 'te', input: [[1, 2]] });
    expect(t.request({ model: 'te', input: [[1, 2]], dimensions: 8, user: null, input_type: null }, { upstreamModel: 'text-embedding-3-small' } as CompiledOffering))
      .toEqual({ model: 'text-embedding-3-small', input: [[1, 2]], dimensions: 8 });
  });

  it('treats a wrong count, the wrong encoding or a missing usage as a malformed answer (upstream_error)', () => {
    const floats = createNativeJsonToOpenaiEmbeddings({ model: 'm', input: ['a', 'b'] });
    const packed = createNativeJsonToOpenaiEmbeddings({ model: 'm', input: ['a', 'b'], encoding_format: 'base64' });
    const item = (index: number, embedding: unknown) => ({ object: 'embedding', index, embedding });
    const usage = { prompt_tokens: 2, total_tokens: 2 };
    const bad: Array<[typeof floats, unknown]> = [
      [floats, { data: [item(0, [0.1])], usage }],
      [floats, { data: [item(0, [0.1]), item(1, 'AAAA')], usage }],
      [floats, { data: [item(0, [0.1]), item(5, [0.2])], usage }],
      [packed, { data: [item(0, 'AAAA'), item(1, [0.2])], usage }],
      [floats, { data: [item(0, [0.1]), item(1, [0.2])] }],
      [floats, { data: [item(0, [0.1]), item(1, [0.2])], usage: { prompt_tokens: 1.5 } }],
    ];
    for (const [t, answer] of bad) expect(caught(() => t.response(answer as Record<string, unknown>, 'm'))).toMatchObject({ code: 'upstream_error' });
    expect(packed.response({ data: [item(0, 'AAAA'), item(1, 'AAAA')], usage, model: 'upstream-name' }, 'gateway-id')).toEqual({
      body: { object: 'list', data: [item(0, 'AAAA'), item(1, 'AAAA')], model: 'gateway-id', usage }, usage: null, outputText: '', quantities: { input_tokens: 2 },
    });
  });
});
