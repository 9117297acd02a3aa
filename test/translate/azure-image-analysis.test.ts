/**
 * The vision translator (spec 4.12; src/translate/native-json--azure-image-analysis): its golden cases
 * (test/translate/native-json--azure-image-analysis/<case>/) with the raw upstream body checked byte
 * for byte (`upstream-request.json`: `{raw: {content_type, base64}}`), the refusals it makes when it is
 * created (before anything is reserved), malformed vendor answers, Azure errors, and the agreement
 * between the features it bills and the `list-items` count the hold reserves.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { listItemsCounter } from '../../src/meters/counters/list-items.js';
import { projectRoot } from '../../src/paths.js';
import { createNativeJsonToAzureImageAnalysis } from '../../src/translate/native-json--azure-image-analysis/index.js';
import { RawBody } from '../../src/upstream/raw-body.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';
import { pdfOf } from '../helpers/documents.js';

const dir = join(projectRoot(), 'test/translate/native-json--azure-image-analysis');
const json = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const image = `data:image/png;base64,${png(64, 64, 1).toString('base64')}`;
const create = (body: Record<string, unknown>) => createNativeJsonToAzureImageAnalysis(body);

/** The GatewayError `create(body)` throws. */
function refusal(body: Record<string, unknown>): GatewayError {
  try {
    create(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body).slice(0, 80)}`);
}

describe('golden cases with the raw body', () => {
  const cases = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  it('has cases', () => { expect(cases.length).toBeGreaterThanOrEqual(3); });
  for (const name of cases) {
    it(name, () => {
      const file = (f: string) => join(dir, name, f);
      const client = json(file('client-request.json'));
      const translator = create(structuredClone(client));
      const body = translator.request(structuredClone(client), undefined as never);
      expect(body).toBeInstanceOf(RawBody);
      const raw = body as RawBody;
      expect({ raw: { content_type: raw.contentType, base64: raw.data.toString('base64') } }).toEqual(json(file('upstream-request.json')));
      // The bytes sent are exactly the data URL's payload.
      expect(raw.data.equals(Buffer.from(String(client.image).split(',')[1]!, 'base64'))).toBe(true);
      expect(translator.query!(structuredClone(client))).toEqual(json(file('upstream-query.json')));
      const answer = translator.response(json(file('upstream-response.json')), client.model);
      expect(answer.body).toEqual(json(file('client-response.json')));
      expect(answer.usage).toEqual(json(file('usage.json')));
      expect(answer.quantities).toEqual(json(file('quantities.json')));
    });
  }
});

describe('features', () => {
  it('bills the distinct features, exactly what the hold counts with list-items', () => {
    const inputs: unknown[] = [
      ['caption', 'read', 'tags'], 'caption,read,tags', ' tags , tags,caption ', ['tags', 'tags'], ['read, people', 'smartCrops', 'people'],
      'caption,,objects,', ['objects'], 'caption,read,tags,objects,people,smartCrops',
    ];
    for (const features of inputs) {
      const answer = create({ image, features }).response({ modelVersion: '2023-10-01', metadata: { width: 64, height: 64 } }, 'image-analysis');
      expect(answer.quantities!.features, JSON.stringify(features)).toBe(listItemsCounter.count([features]));
      expect(answer.body.usage).toEqual({ features: answer.quantities!.features });
    }
  });

  it('sends the features once each, in the client\'s order, as one comma-separated value', () => {
    expect(create({ image, features: ['people', 'caption', 'people'] }).query!({ features: ['people', 'caption', 'people'] })).toEqual({ features: ['people,caption'] });
  });

  it('refuses an unknown feature with a 400 naming it and the supported ones', () => {
    const error = refusal({ image, features: ['caption', 'denseCaptions', 'faces'] });
    expect([error.status, error.code, error.extra.param]).toEqual([400, 'unsupported_parameter', 'features']);
    expect(error.message).toBe("Unsupported features 'denseCaptions', 'faces' in 'features' (supported: caption, read, tags, objects, people, smartCrops).");
  });

  it('tells a near miss in case the vendor\'s spelling', () => {
    const error = refusal({ image, features: 'tags,SmartCrops' });
    expect(error.code).toBe('unsupported_parameter');
    expect(error.message).toMatch(/^Unsupported feature 'SmartCrops' in 'features' \(supported: .*\); names are case-sensitive \(did you mean 'smartCrops'\?\)\.$/);
  });

  it('refuses a list that selects nothing', () => {
    for (const features of [' , ', ',', ['', ' ']]) {
      const error = refusal({ image, features });
      expect([error.status, error.code, error.extra.param], JSON.stringify(features)).toEqual([400, 'invalid_request', 'features']);
      expect(error.message).toMatch(/Select at least one feature/);
    }
  });

  it('refuses an option whose feature is not selected (never silently dropped)', () => {
    const neutral = refusal({ image, features: ['tags'], gender_neutral_caption: true });
    expect([neutral.code, neutral.extra.param, neutral.message]).toEqual(['unsupported_parameter', 'gender_neutral_caption', "'gender_neutral_caption' applies to the caption feature, which 'features' does not select."]);
    const ratios = refusal({ image, features: 'caption', smartcrops_aspect_ratios: [1] });
    expect([ratios.code, ratios.extra.param]).toEqual(['unsupported_parameter', 'smartcrops_aspect_ratios']);
    expect(create({ image, features: 'caption', gender_neutral_caption: false }).query!({ features: 'caption', gender_neutral_caption: false })).toEqual({ features: ['caption'], 'gender-neutral-caption': ['false'] });
  });
});

describe('the image', () => {
  it('sends a JPEG\'s bytes as they are', () => {
    const bytes = jpeg(120, 90);
    const raw = create({ image: bytes.toString('base64'), features: 'tags' }).request({}, undefined as never) as RawBody;
    expect([raw.contentType, raw.data.equals(bytes)]).toEqual(['application/octet-stream', true]);
  });

  it('refuses what the vendor cannot take, as a 400 naming image', async () => {
    const cases: Array<[string, RegExp]> = [
      [`data:application/pdf;base64,${(await pdfOf(1)).toString('base64')}`, /not a JPEG, PNG, GIF, BMP, WEBP or TIFF image/],
      [png(49, 200).toString('base64'), /49 x 200 pixels; it must be from 50 x 50 to 16000 x 16000/],
      [png(16_001, 60).toString('base64'), /16001 x 60 pixels/],
      [Buffer.concat([png(64, 64), Buffer.alloc(20 * 1024 * 1024)]).toString('base64'), /the limit is 20971520 bytes/],
      ['not base64!', /not valid base64/],
    ];
    for (const [value, message] of cases) {
      const error = refusal({ image: value, features: 'caption' });
      expect([error.status, error.extra.param], String(message)).toEqual([400, 'image']);
      expect(error.message).toMatch(message);
    }
  });
});

describe('answers and errors', () => {
  const translator = create({ image, features: ['tags', 'objects'] });
  const ok = { modelVersion: '2023-10-01', metadata: { width: 64, height: 64 } };

  it('refuses a malformed answer as the upstream\'s fault (502)', () => {
    const bad: unknown[] = [
      {}, { ...ok, metadata: { width: 0, height: 64 } }, { metadata: ok.metadata }, { ...ok, tagsResult: { values: 'wall' } },
      { ...ok, objectsResult: { values: [{ boundingBox: { x: 1, y: 1, w: 2 }, tags: [] }] } }, { ...ok, tagsResult: { values: [{ name: 'x', confidence: '1' }] } }, [],
    ];
    for (const body of bad) {
      expect(() => translator.response(body as Record<string, unknown>, 'image-analysis'), JSON.stringify(body)).toThrow(expect.objectContaining({ code: 'upstream_error', status: 502 }));
    }
  });

  it('maps Azure.Core errors: the inner message of a 400, the gateway\'s own fault for 401, 429 with its retry-after', () => {
    const message = 'The image dimension is not allowed to be smaller than 50 and larger than 16000.';
    const invalid = translator.error(400, { error: { code: 'InvalidRequest', message: 'Bad request', innererror: { code: 'InvalidImageSize', message } } }, {});
    expect([invalid.status, invalid.code, invalid.message]).toEqual([400, 'invalid_request', message]);
    expect(translator.error(401, { error: { code: '401', message: 'Access denied due to invalid subscription key xyz-test-not-real' } }, {})).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(translator.error(401, {}, {}).message).not.toMatch(/xyz/);
    expect(translator.error(429, { error: { code: '429', message: 'Rate limit' } }, { 'retry-after': '7' })).toMatchObject({ code: 'upstream_rate_limited', status: 429 });
    expect(translator.error(500, { error: { code: 'InternalServerError', message: 'x' } }, {})).toMatchObject({ code: 'upstream_error', status: 502 });
  });

  it('does not stream', () => {
    expect(() => translator.stream('image-analysis')).toThrow(GatewayError);
  });
});
