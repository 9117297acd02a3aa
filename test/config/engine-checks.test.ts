/**
 * The engine's config checks (issue 9 point 2): boot, hot reload and codegen refuse, with file, path
 * and reason, what would otherwise fail per request: an unknown client format, a meter some reachable
 * offering does not price, an unknown local counter, a quantity read from the answer with nothing to
 * reserve, a token meter on a format that cannot count tokens, a default offering the route cannot serve.
 */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { meteredUnits } from '../../src/meters/index.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

async function refusal(edit: (c: ConfigCopy) => Promise<void>): Promise<ManifestError> {
  const copy = await copyConfig();
  await edit(copy);
  const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' })).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ManifestError);
  return error as ManifestError;
}

describe('engine config checks', () => {
  it('refuses an unknown client format, naming the known ones', async () => {
    const e = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.format = 'native-xml'; }));
    expect(e.file).toBe('routes/rerank.yaml');
    expect(e.path).toBe('/format');
    expect(e.reason).toBe('unknown client format "native-xml" (known: openai-chat, openai-responses, anthropic-messages, native-json, cohere)');
  });

  it('refuses a route that does not meter the unit of an offering it reaches', async () => {
    const e = await refusal((c) => c.editYaml('providers/cohere.yaml', (d) => { d.offerings[0].billing.unit = 'record'; }));
    // routes/cohere-rerank.yaml (issue 31 item 11) reaches the same offering and is checked before rerank.yaml.
    expect(e.file).toBe('routes/cohere-rerank.yaml');
    expect(e.path).toBe('/meter');
    expect(e.reason).toBe('offering "rerank-pro" (provider cohere) is billed per record, which this route does not meter (it meters: search)');
  });

  it('refuses an unknown local counter, naming the known ones', async () => {
    const e = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.meter.search.source = { counter: 'words', of: ['/query'] }; }));
    expect(e.path).toBe('/meter/search/source/counter');
    expect(e.reason).toBe('unknown local counter "words" (known: characters, utf16-units, text-elements, text-records, tokens, image-units, image-size-units, audio-seconds, files, pages, document-characters, list-items)');
  });

  it('refuses a source that declares two things, or a counter without `of`', async () => {
    const two = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.meter.search.source = { constant: 1, request: '/top_n' }; }));
    expect(two.path).toBe('/meter/search/source');
    expect(two.reason).toBe('declare exactly one of translator, upstream, header, request, constant, counter (found request, constant)');
    const noOf = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.meter.search.source = { counter: 'characters' }; }));
    expect(noOf.path).toBe('/meter/search/source/of');
  });

  it('refuses a quantity read from the answer with no reserve', async () => {
    const e = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.meter.search.source = { upstream: '/meta/billed_units/search_units' }; }));
    expect(e.path).toBe('/meter/search');
    expect(e.reason).toMatch(/declare a `reserve` that reads the request/);
  });

  it('refuses a token meter on a format that cannot size requests in tokens', async () => {
    const e = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.meter = { token: { source: { translator: 'tokens' } } }; }));
    expect(e.path).toBe('/meter/token');
    expect(e.reason).toBe('client format "native-json" cannot size requests in tokens, so it cannot have a token meter');
  });

  it('refuses a billable route with no meter, and a default offering the route cannot serve', async () => {
    const noMeter = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { delete d.meter; }));
    expect(noMeter.path).toBe('/meter');
    const wrongDefault = await refusal((c) => c.editYaml('routes/rerank.yaml', (d) => { d.model = { required: false, default: 'gpt-4o-mini' }; }));
    expect(wrongDefault.path).toBe('/model/default');
    expect(wrongDefault.reason).toBe('offering "gpt-4o-mini" does not exist or is not served by this route');
  });

  it('refuses an embedding offering the embeddings route does not meter, and an embed operation with no translator', async () => {
    const unit = await refusal((c) => c.editYaml('providers/cohere.yaml', (d) => {
      d.offerings.find((o: { id: string }) => o.id === 'embed-pro').billing = { unit: 'character', per: 1000000, price: '0.10' };
    }));
    // routes/cohere-embed.yaml (issue 31 item 11) reaches the same offering and is checked before embeddings.yaml.
    expect(unit.file).toBe('routes/cohere-embed.yaml');
    expect(unit.path).toBe('/meter');
    expect(unit.reason).toBe('offering "embed-pro" (provider cohere) is billed per character, which this route does not meter (it meters: token)');
    const format = await refusal((c) => c.editYaml('providers/cohere.yaml', (d) => { d.operations.embed.format = 'cohere-embed-v9'; }));
    expect(format.file).toBe('routes/cohere-embed.yaml');
    expect(format.path).toBe('/upstreams/0');
    expect(format.reason).toBe('no translator cohere--cohere-embed-v9 for operation "embed" of provider cohere');
  });

  it('meters embeddings as a quantity of input tokens, not with the token meter (native-json cannot size requests in tokens)', async () => {
    const copy = await copyConfig();
    const gateway = await compileGateway(await loadGateway(copy.configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
    const route = gateway.routes.find((r) => r.manifest.id === 'embeddings')!;
    expect([...meteredUnits(route)]).toEqual(['token']);
    // Without a declared reserve (the input estimate, e.g. spec 4.8's audio tokens from the measured duration).
    const e = await refusal((c) => c.editYaml('routes/embeddings.yaml', (d) => { d.meter.token.source = { translator: 'tokens' }; delete d.meter.token.reserve; }));
    expect(e.path).toBe('/meter/token');
    expect(e.reason).toBe('client format "native-json" cannot size requests in tokens, so it cannot have a token meter');
  });

  it('refuses an operation path parameter the route does not resolve', async () => {
    const e = await refusal((c) => c.editYaml('providers/cohere.yaml', (d) => { d.operations.rerank.path = '/v2/{family}/rerank'; }));
    expect(e.file).toBe('routes/cohere-rerank.yaml');
    expect(e.path).toBe('/upstreams/0/path_params');
    expect(e.reason).toBe('operation "rerank" of provider cohere has path /v2/{family}/rerank: declare where {family} comes from');
  });

  it('refuses url_inputs and query_fields naming fields the request schema does not have', async () => {
    const into = await refusal((c) => c.editYaml('routes/videos-generations.yaml', (d) => { d.url_inputs.image.into = 'picture'; }));
    expect(into.path).toBe('/url_inputs/image');
    expect(into.reason).toBe('"picture" is not a property of the route\'s request schema');
    const query = await refusal((c) => c.editYaml('routes/translate.yaml', (d) => { d.query_fields = ['to', 'target']; }));
    expect(query.path).toBe('/query_fields/1');
    expect(query.reason).toBe('"target" is not a property of the route\'s request schema');
  });

  it('picks the cheapest available reachable offering as the default when none is named', async () => {
    const copy = await copyConfig();
    await copy.editYaml('routes/rerank.yaml', (d) => { d.model = { required: false }; });
    await copy.editYaml('providers/cohere.yaml', (d) => {
      d.offerings.push({ ...d.offerings[0], id: 'rerank-cheap', aliases: undefined, billing: { unit: 'search', per: 1, price: '0.001' } });
      d.offerings.push({ ...d.offerings[0], id: 'rerank-cheaper-but-off', aliases: undefined, availability: 'unavailable', billing: { unit: 'search', per: 1, price: '0.0001' } });
    });
    const gateway = await compileGateway(await loadGateway(copy.configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
    expect(gateway.routes.find((r) => r.manifest.id === 'rerank')!.defaultModel).toBe('rerank-cheap');
  });
});

describe('the Azure providers and the language and moderation routes', () => {
  const compile = async (env: Record<string, string>) => compileGateway(await loadGateway((await copyConfig()).configFile), { env, simulatorUrl: 'http://127.0.0.1:1' });

  it('needs an Azure endpoint (the resource root, no default) once its key is set, and simulates the provider without its key', async () => {
    for (const [file, key, endpoint] of [['providers/azure-language.yaml', 'AZURE_LANGUAGE_KEY', 'AZURE_LANGUAGE_ENDPOINT'], ['providers/azure-content-safety.yaml', 'AZURE_CONTENT_SAFETY_KEY', 'AZURE_CONTENT_SAFETY_ENDPOINT']] as const) {
      const error = await compile({ [key]: 'azure-key' }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ManifestError);
      expect(error).toMatchObject({ file, path: '/base_url', reason: `${endpoint} must be set when ${key} is (the resource's endpoint)` });
    }
    const real = await compile({ AZURE_LANGUAGE_KEY: 'azure-key', AZURE_LANGUAGE_ENDPOINT: 'https://res.cognitiveservices.azure.com/' });
    const language = real.providers.get('azure_language')!;
    expect(language).toMatchObject({ baseUrl: 'https://res.cognitiveservices.azure.com', simulated: false, auth: { header: 'ocp-apim-subscription-key', prefix: '' } });
    expect(language.keys.any()).toEqual({ index: 0, location: 'env:AZURE_LANGUAGE_KEY', value: 'azure-key' });
    expect(language.operations.analyze).toMatchObject({ method: 'POST', path: '/language/:analyze-text', query: '?api-version=2026-05-01', poll: null });
    expect(language.operations.summarize).toMatchObject({
      path: '/language/analyze-text/jobs', query: '?api-version=2026-05-01',
      poll: { locationHeader: 'operation-location', statusPointer: ['status'], succeeded: new Set(['succeeded', 'partiallyCompleted']), failed: new Set(['failed', 'cancelled']), intervalMs: 500, deadlineMs: 60_000 },
    });
    const simulated = await compile({});
    expect(simulated.providers.get('azure_content_safety')).toMatchObject({ baseUrl: 'http://127.0.0.1:1', simulated: true });
    expect(simulated.providers.get('azure_content_safety')!.keys.size).toBe(0);
    expect(simulated.providers.get('azure_content_safety')!.operations['moderate-text']).toMatchObject({ path: '/contentsafety/text:analyze', query: '?api-version=2024-09-01' });
  });

  it('serves requests without a model with the default offering of each route', async () => {
    const gateway = await compile({});
    const defaults = Object.fromEntries(gateway.routes.filter((r) => ['moderations', 'language-analyze', 'language-summarize'].includes(r.manifest.id)).map((r) => [r.manifest.id, r.defaultModel]));
    // OpenAI's free omni model (issue 31 item 10) is the cheapest; a request's input picks among the defaults (route stage).
    expect(defaults).toEqual({ moderations: 'omni-moderation-latest', 'language-analyze': 'language-standard', 'language-summarize': 'language-standard' });
  });

  it('refuses a text-record meter read from the translator with no reserve, or a language offering billed in a unit the routes do not meter', async () => {
    const noReserve = await refusal((c) => c.editYaml('routes/language-summarize.yaml', (d) => { delete d.meter.text_record.reserve; }));
    expect(noReserve).toMatchObject({ file: 'routes/language-summarize.yaml', path: '/meter/text_record' });
    expect(noReserve.reason).toMatch(/declare a `reserve` that reads the request/);
    const unit = await refusal((c) => c.editYaml('providers/azure-language.yaml', (d) => { d.offerings[0].billing = { unit: 'character', per: 1000000, price: '1.00' }; }));
    expect(unit).toMatchObject({ file: 'routes/language-analyze.yaml', path: '/meter' });
    expect(unit.reason).toBe('offering "language-standard" (provider azure_language) is billed per character, which this route does not meter (it meters: text_record)');
  });
});
