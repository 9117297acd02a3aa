/**
 * Contract (spec 4.14): the gateway's outgoing image-generation requests against OpenAI's published
 * spec (createImage, CreateImageRequest). A Prism mock plays OpenAI; the gateway runs with a
 * real-looking OpenAI key pointed at it, so the JSON the translator builds
 * (native-json--openai-images) is what Prism validates: each request must pass with no violation and
 * reach the vendor's path. A negative control (a value outside the spec's enum, sent straight to the
 * mock) shows the validation is live. Image edits (createImageEdit, CreateImageEditRequest) likewise:
 * the multipart form the gateway builds (native-json--openai-image-edits) goes to the mock as the
 * upstream, not through Prism's proxy (which mangles binary bodies). OpenAI's spec declares `image`
 * as one binary or an array of them; the official SDK and OpenAI's documented curl examples send
 * several images as repeated `image[]` parts, which Prism (reading a form array only from parts of the
 * property's own name) cannot map to `image`: the mock plays a copy of the spec whose
 * CreateImageEditRequest also takes `image[]`, with the same item schema and 16-image limit, and needs
 * one of the two. Billing is not checked here: the mock's answer is generated from the schema, not a
 * real generation.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismProcess } from '../helpers/prism.js';

const OPENAI_SPEC = resolve(projectRoot(), '../shared/specs/openai/openapi.prism.json');

/** The spec with CreateImageEditRequest also taking the SDK's `image[]` spelling (one of the two required); its path. */
function specTakingBracketedImages(dir: string): string {
  const doc = JSON.parse(readFileSync(OPENAI_SPEC, 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[]; anyOf?: unknown }> } };
  const edit = doc.components.schemas.CreateImageEditRequest!;
  edit.properties['image[]'] = edit.properties.image;
  edit.required = edit.required.filter((name) => name !== 'image');
  edit.anyOf = [{ required: ['image'] }, { required: ['image[]'] }];
  const file = join(dir, 'openai.prism.json');
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe.runIf(storeKind === 'pglite')('Prism OpenAI images contract: generation requests validate against the spec', () => {
  let openai: PrismProcess;
  let t: TestGateway;
  let key: string;

  let tmp: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'gw-prism-images-'));
    openai = await startPrismMock(specTakingBracketedImages(tmp));
    t = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-test-not-real', OPENAI_BASE_URL: openai.url } });
    key = (await t.account('5')).key;
  }, 180_000);
  afterAll(async () => {
    await t?.dispose();
    await stopChild(openai?.child);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  /** Sends `body` through the gateway and returns the one request the mock logged for it. */
  async function viaGateway(body: Record<string, unknown>) {
    const mark = logMark(openai);
    const res = await fetch(`${t.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    const logged = await loggedRequestsSince(openai, mark, 1);
    const detail = `-> ${res.status} ${text.slice(0, 300)}\n${logged.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    expect(logged, detail).toHaveLength(1);
    return { status: res.status, logged: logged[0]!, detail };
  }

  const cases: Array<[string, Record<string, unknown>]> = [
    ['gpt-image-1 with every parameter it takes', { model: 'gpt-image-1', prompt: 'A red square.', n: 2, size: '1536x1024', quality: 'high', background: 'opaque', output_format: 'webp', output_compression: 80, user: 'user-42' }],
    ['gpt-image-1 with the defaults', { model: 'gpt-image-1', prompt: 'A red square.' }],
    ['dall-e-3 with every parameter it takes', { model: 'dall-e-3', prompt: 'A lighthouse.', n: 1, size: '1024x1024', quality: 'standard', style: 'natural', response_format: 'b64_json' }],
  ];
  for (const [name, body] of cases) {
    it(`${name}: the upstream request passes the vendor's schema`, async () => {
      const { status, logged, detail } = await viaGateway(body);
      expect(status, detail).toBe(200);
      expect(logged.method).toBe('POST');
      expect(logged.path).toBe('/images/generations');
      expect(logged.violations, detail).toEqual([]);
      expect(logged.passed, detail).toBe(true);
      expect(logged.terminated, detail).toBeNull();
      expect(logged.headers['content-type'], detail).toMatch(/^application\/json/);
    });
  }

  /** Sends a multipart edit through the gateway; the one request the mock logged for it. */
  async function editViaGateway(form: FormData) {
    const mark = logMark(openai);
    const res = await fetch(`${t.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const text = await res.text();
    const logged = await loggedRequestsSince(openai, mark, 1);
    const detail = `-> ${res.status} ${text.slice(0, 300)}\n${logged.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    expect(logged, detail).toHaveLength(1);
    return { status: res.status, logged: logged[0]!, detail };
  }

  /** An edit form: text fields, then `images` in the part `image` (or `image[]` each), and an optional mask. */
  const editForm = (fields: Record<string, string>, images: number, name = 'image', mask = false): FormData => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    for (let i = 0; i < images; i++) f.append(name, new Blob([new Uint8Array(png(4, 4, i))], { type: 'image/png' }), `in-${i}.png`);
    if (mask) f.append('mask', new Blob([new Uint8Array(png(4, 4, 99))], { type: 'image/png' }), 'mask.png');
    return f;
  };

  // Spec 4.14: the gateway's createImageEdit forms (native-json--openai-image-edits): one image as
  // `image`, several as repeated `image[]` (as the official SDK sends an array), a mask, every option.
  const edits: Array<[string, () => FormData]> = [
    ['gpt-image-1, one image, every option it takes', () => editForm({ model: 'gpt-image-1', prompt: 'Blue.', n: '2', size: '1024x1536', quality: 'high', background: 'transparent', output_format: 'webp', output_compression: '60', input_fidelity: 'high', user: 'user-42' }, 1)],
    ['gpt-image-1, three images as image[] and a mask', () => editForm({ model: 'gpt-image-1', prompt: 'Blend.' }, 3, 'image[]', true)],
    ['gpt-image-1, two images sent as repeated image', () => editForm({ model: 'gpt-image-1', prompt: 'Blend.' }, 2, 'image')],
    ['dall-e-2, one square PNG, a mask and every option it takes', () => editForm({ model: 'dall-e-2', prompt: 'A hat.', n: '3', size: '1024x1024', response_format: 'b64_json', user: 'u' }, 1, 'image', true)],
  ];
  for (const [name, form] of edits) {
    it(`edit, ${name}: the upstream multipart request passes the vendor's schema`, async () => {
      const { status, logged, detail } = await editViaGateway(form());
      expect(status, detail).toBe(200);
      expect(logged.method).toBe('POST');
      expect(logged.path).toBe('/images/edits');
      expect(logged.violations, detail).toEqual([]);
      expect(logged.passed, detail).toBe(true);
      expect(logged.terminated, detail).toBeNull();
      expect(logged.headers['content-type'], detail).toMatch(/^multipart\/form-data; boundary=/);
    });
  }

  it('negative control: an edit with no image under either name, sent straight to the mock, gets a violation', async () => {
    const mark = logMark(openai);
    const res = await fetch(`${openai.url}/images/edits`, { method: 'POST', headers: { authorization: 'Bearer sk-test-not-real' }, body: editForm({ model: 'gpt-image-1', prompt: 'x' }, 0) });
    await res.arrayBuffer();
    const [logged] = await loggedRequestsSince(openai, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.violations.join('\n')).toMatch(/image/);
  });

  it('negative control: an edit without its prompt, sent straight to the mock, gets a violation', async () => {
    const mark = logMark(openai);
    const f = editForm({ model: 'gpt-image-1' }, 1);
    const res = await fetch(`${openai.url}/images/edits`, { method: 'POST', headers: { authorization: 'Bearer sk-test-not-real' }, body: f });
    await res.arrayBuffer();
    const [logged] = await loggedRequestsSince(openai, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.violations.join('\n')).toMatch(/prompt/);
  });

  it('negative control: a quality outside the spec\'s enum, sent straight to the mock, gets a violation', async () => {
    const mark = logMark(openai);
    const res = await fetch(`${openai.url}/images/generations`, { method: 'POST', headers: { authorization: 'Bearer sk-test-not-real', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-image-1', prompt: 'x', quality: 'ultra' }) });
    await res.arrayBuffer();
    const [logged] = await loggedRequestsSince(openai, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.violations.join('\n')).toMatch(/quality/);
  });
});
