/**
 * Contract for the native endpoints (issue 9): the gateway's own upstream requests, sent with real-looking
 * keys to Prism mocks that play each vendor from its published spec (../shared/specs), validate with
 * no violation, and reach the expected path with the expected auth header. The mocks' static examples
 * carry placeholder content (indexes, usage headers), so what the client gets back is not the point
 * here: the simulator and the end-to-end tests check answers and billing.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayRequestAsLogged, startPrismMock, stopChild, type PrismLoggedRequest, type PrismProcess } from '../helpers/prism.js';

const SPECS = resolve(projectRoot(), '../shared/specs');
const COHERE_SPEC = resolve(SPECS, 'cohere/cohere-openapi.prism.yaml');
const TRANSLATOR_SPEC = resolve(SPECS, 'azure/translator-text/TextTranslation-3.0.openapi.prism-oas3.json');

describe.runIf(storeKind === 'pglite')('Prism vendor contract: native upstream requests validate against the vendors\' specs', () => {
  let cohere: PrismProcess;
  let translator: PrismProcess;
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    [cohere, translator] = await Promise.all([startPrismMock(COHERE_SPEC), startPrismMock(TRANSLATOR_SPEC)]);
    t = await startTestGateway({
      env: {
        COHERE_API_KEY: 'co-test-not-real', COHERE_BASE_URL: cohere.url,
        AZURE_TRANSLATOR_KEY: 'translator-test-not-real', AZURE_TRANSLATOR_ENDPOINT: translator.url, AZURE_TRANSLATOR_REGION: 'westeurope',
      },
    });
    key = (await t.account('5')).key;
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await Promise.all([stopChild(cohere?.child), stopChild(translator?.child)]);
  }, 60_000);

  /** Sends a client request through the gateway; returns the one request the vendor's mock logged, checked clean. */
  const upstreamOf = async (vendor: PrismProcess, route: string, body: unknown, path: string): Promise<PrismLoggedRequest> =>
    (await gatewayRequestAsLogged(t.url, key, vendor, route, body, path)).logged;

  it('rerank: POST /v2/rerank with the vendor model, string documents and top_n', async () => {
    const logged = await upstreamOf(cohere, '/v1/rerank', { model: 'rerank-pro', query: 'capital of France', documents: ['Paris', { text: 'Berlin' }], top_n: 1 }, '/v2/rerank');
    const log = logged.lines.join('\n');
    expect(log).toContain('authorization: Bearer co-test-not-real');
    expect(log).toContain('Body: {"model":"rerank-v3.5","query":"capital of France","documents":["Paris","Berlin"],"top_n":1}');
  });

  it('embeddings: POST /v2/embed with the vendor model, texts as documents, truncate NONE and the output dimension (768 from 1024, 2048 from 1536)', async () => {
    const logged = await upstreamOf(cohere, '/v1/embeddings', { model: 'embed-pro', input: ['hello', 'world'], dimensions: 768, encoding_format: 'base64' }, '/v2/embed');
    const log = logged.lines.join('\n');
    expect(log).toContain('authorization: Bearer co-test-not-real');
    // 768 dimensions are the 1024-dimension embedding shortened by the gateway (embed-v4.0 lists 256, 512, 1024, 1536).
    expect(log).toContain('Body: {"model":"embed-v4.0","texts":["hello","world"],"input_type":"search_document","embedding_types":["base64"],"output_dimension":1024,"truncate":"NONE"}');
    // 2048 dimensions (spec 4.15) are the 1536-dimension embedding padded with zeros by the gateway: 1536 goes upstream.
    const padded = (await upstreamOf(cohere, '/v1/embeddings', { model: 'embed-fast', input: 'hello', dimensions: 2048 }, '/v2/embed')).lines.join('\n');
    expect(padded).toContain('Body: {"model":"embed-v4.0","texts":["hello"],"input_type":"search_document","embedding_types":["float"],"output_dimension":1536,"truncate":"NONE"}');
  });

  // Prism checks the required query parameters (api-version, to) but does not log them; their values
  // are checked by the simulator, which refuses a wrong api-version or a `to` list in one value.
  it('translate: POST /translate with its query, the body as [{text}], and the key and region headers', async () => {
    const logged = await upstreamOf(translator, '/v1/translate', { text: ['Hello', 'World'], to: ['de', 'fr'], from: 'en' }, '/translate');
    const log = logged.lines.join('\n');
    expect(log).toContain('ocp-apim-subscription-key: translator-test-not-real');
    expect(log).toContain('ocp-apim-subscription-region: westeurope');
    expect(log).toContain('Body: [{"text":"Hello"},{"text":"World"}]');
  });
});
