/**
 * The route keys of issue 10 item 5 (spec 4.7 rule 3, 4.11): `file_inputs` must name two different
 * properties of the route's request schema, and a purpose of spec 2; an upstream's `when.present`
 * chooses the operation by the request (after file inputs ran), while boot checks and endpoint hints
 * still see every operation a model can reach. `into: {file: <part>}` targets a declared multipart part.
 */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import type { CompiledGateway } from '../../src/config/types.js';
import { chooseUpstream, servesOffering, wrongEndpoint } from '../../src/config/upstream-choice.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

async function compiled(edit?: (c: ConfigCopy) => Promise<void>): Promise<CompiledGateway> {
  const copy = await copyConfig();
  await edit?.(copy);
  return compileGateway(await loadGateway(copy.configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
}

async function refusal(edit: (c: ConfigCopy) => Promise<void>): Promise<Error> {
  const error = await compiled(edit).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('file_inputs and when.present', () => {
  it('chooses image:analyze for a request with an image and text:analyze for text, each on its own offering; every operation counts at boot', async () => {
    const gateway = await compiled();
    const route = gateway.routes.find((r) => r.manifest.id === 'moderations')!;
    const text = gateway.offerings.get('content-safety-text')!;
    const image = gateway.offerings.get('content-safety-image')!;
    const provider = gateway.providers.get(text.providerId)!;
    // OpenAI's shape first (issue 31 item 10: a body with `input`), then the spec's image and text.
    expect(route.upstreams.map((u) => [u.operation, u.when.present, u.when.absent])).toEqual([['moderations', ['input'], undefined], ['moderate-image', ['image'], undefined], ['moderate-text', ['text'], undefined]]);
    expect(chooseUpstream(route, image, provider, { image: 'aGk=' })?.operation).toBe('moderate-image');
    expect(chooseUpstream(route, text, provider, { text: 'hi' })?.operation).toBe('moderate-text');
    // Each offering is limited to its operation: the vendor prices text records and images apart.
    expect(chooseUpstream(route, text, provider, { image: 'aGk=' })).toBeNull();
    expect(chooseUpstream(route, image, provider, { text: 'hi' })).toBeNull();
    // `present: /text`: OpenAI's `input` never reaches the text translator (a request with no input at
    // all is refused by the request schema first, naming the inputs).
    expect(chooseUpstream(route, text, provider, { input: 'hi' })).toBeNull();
    expect(chooseUpstream(route, text, provider, {})).toBeNull();
    expect(servesOffering(route, text, provider) && servesOffering(route, image, provider)).toBe(true);
    // Without `model`: the cheapest first, and the route stage takes the first that takes the input.
    // OpenAI's free omni model is the cheapest, and takes only OpenAI's shape.
    expect(route.defaultModel).toBe('omni-moderation-latest');
    expect(route.defaultModels).toEqual(['omni-moderation-latest', 'content-safety-text', 'content-safety-image']);
  });

  it('a model that cannot take the request\'s input gets a 400 naming the one that can, not "use another endpoint"', async () => {
    const gateway = await compiled();
    const route = gateway.routes.find((r) => r.manifest.id === 'moderations')!;
    const text = gateway.offerings.get('content-safety-text')!;
    const provider = gateway.providers.get(text.providerId)!;
    expect(wrongEndpoint(gateway, route, text, provider, { image: 'aGk=' })).toMatchObject({
      code: 'invalid_request', extra: { param: 'model' }, message: 'The model "content-safety-text" cannot take this request\'s input on /v1/moderations; use "content-safety-image" instead.',
    });
    // No offering takes it (no upstream for text any more): the 400 says to choose another model.
    const imageOnly = await compiled((c) => c.editYaml('routes/moderations.yaml', (d) => { d.upstreams = [{ operation: 'moderate-image', when: { present: '/image' } }]; }));
    const imageRoute = imageOnly.routes.find((r) => r.manifest.id === 'moderations')!;
    const image = imageOnly.offerings.get('content-safety-image')!;
    expect(chooseUpstream(imageRoute, image, provider, { text: 'hi' })).toBeNull();
    expect(wrongEndpoint(imageOnly, imageRoute, image, provider, { text: 'hi' })).toMatchObject({
      message: 'The model "content-safety-image" cannot take this request\'s input on /v1/moderations; choose another model.',
    });
  });

  it('refuses a file input from or into a field the request schema does not have, into itself, an unknown purpose, or a pointer that is not one', async () => {
    const unknownInto = await refusal((c) => c.editYaml('routes/moderations.yaml', (d) => { d.file_inputs.file_id.into = 'picture'; }));
    expect(unknownInto).toBeInstanceOf(ManifestError);
    expect(unknownInto).toMatchObject({ file: 'routes/moderations.yaml', path: '/file_inputs/file_id', reason: '"picture" is not a property of the route\'s request schema' });
    const unknownField = await refusal((c) => c.editYaml('routes/moderations.yaml', (d) => { d.file_inputs = { document_id: { purposes: ['MODERATION_INPUT'], into: 'image' } }; }));
    expect(unknownField).toMatchObject({ path: '/file_inputs/document_id', reason: '"document_id" is not a property of the route\'s request schema' });
    const itself = await refusal((c) => c.editYaml('routes/moderations.yaml', (d) => { d.file_inputs.file_id.into = 'file_id'; }));
    expect(itself).toMatchObject({ path: '/file_inputs/file_id/into' });
    const purpose = await refusal((c) => c.editYaml('routes/moderations.yaml', (d) => { d.file_inputs.file_id.purposes = ['SELFIES']; }));
    expect(purpose.message).toMatch(/routes\/moderations\.yaml/);
    const pointer = await refusal((c) => c.editYaml('routes/moderations.yaml', (d) => { d.upstreams[0].when.present = 'image'; }));
    expect(pointer.message).toMatch(/routes\/moderations\.yaml/);
  });

  it('puts a file into a multipart part only when the route declares that part (spec 4.8 audio)', async () => {
    const gateway = await compiled();
    const route = gateway.routes.find((r) => r.manifest.id === 'audio-transcriptions')!;
    expect(route.manifest.file_inputs).toEqual({ file_id: { purposes: ['AUDIO_INPUT'], into: { file: 'file' } } });
    expect(route.multipart).toMatchObject({ acceptsJson: true, files: { file: { min: 1, max: 1, probe: 'audio' } } });
    const undeclared = await refusal((c) => c.editYaml('routes/audio-transcriptions.yaml', (d) => { d.file_inputs.file_id.into = { file: 'audio' }; }));
    expect(undeclared).toMatchObject({ file: 'routes/audio-transcriptions.yaml', path: '/file_inputs/file_id/into/file', reason: '"audio" is not a file part of the route\'s multipart body' });
    const jsonRoute = await refusal((c) => c.editYaml('routes/moderations.yaml', (d) => { d.file_inputs.file_id.into = { file: 'image' }; }));
    expect(jsonRoute).toMatchObject({ path: '/file_inputs/file_id/into/file' });
  });
});
