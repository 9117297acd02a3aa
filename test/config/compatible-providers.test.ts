/**
 * The OpenAI-compatible providers by YAML alone (issue 32 item 1), as the configuration compiles them:
 * each simulated while its key is unset (under its own path prefix, which the simulator serves), live
 * with its key; the self-hosted ones (vLLM, Ollama) there only while their base URL is set, never
 * simulated; usage dialects compiled from the manifests.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { loadGateway, type RawGateway } from '../../src/config/load.js';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

const SIM = 'http://127.0.0.1:1';
const HOSTED = ['azure_openai', 'gemini', 'mistral', 'groq', 'deepseek', 'xai', 'openrouter'];

describe('OpenAI-compatible providers', () => {
  let raw: RawGateway;
  beforeAll(async () => { raw = await loadGateway(join(projectRoot(), 'gateway.config.yaml')); });
  const compile = (env: Record<string, string>) => compileGateway(raw, { env, simulatorUrl: SIM });

  it('serves every hosted vendor from the simulator while its key is unset, under the vendor prefix', async () => {
    const g = await compile({});
    for (const id of HOSTED) expect(g.providers.get(id)?.simulated, id).toBe(true);
    expect(g.providers.get('gemini')!.baseUrl).toBe(`${SIM}/v1beta/openai`);
    expect(g.providers.get('groq')!.baseUrl).toBe(`${SIM}/openai/v1`);
    expect(g.providers.get('openrouter')!.baseUrl).toBe(`${SIM}/api/v1`);
    expect(g.providers.get('azure_openai')!.baseUrl).toBe(SIM);
  });

  it('leaves vLLM and Ollama out, offerings and all, until their base URL is set', async () => {
    const unset = await compile({});
    expect(unset.providers.has('vllm')).toBe(false);
    expect(unset.providers.has('ollama')).toBe(false);
    expect(unset.offerings.has('vllm-llama-3.1-8b-instruct')).toBe(false);
    expect(unset.offerings.has('ollama-llama3.2')).toBe(false);

    const set = await compile({ VLLM_BASE_URL: 'http://127.0.0.1:8000/v1', OLLAMA_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(set.providers.get('vllm')).toMatchObject({ simulated: false, baseUrl: 'http://127.0.0.1:8000/v1' });
    expect(set.providers.get('ollama')).toMatchObject({ simulated: false, baseUrl: 'http://127.0.0.1:11434/v1' });
    // No key: no credential in the pool, so no auth header is sent.
    expect(set.providers.get('ollama')!.keys.size).toBe(0);
    expect(set.offerings.get('ollama-llama3.2')!.upstreamModel).toBe('llama3.2');
  });

  it('uses the key and base URL when set: Azure sends api-key to the resource endpoint', async () => {
    const g = await compile({ AZURE_OPENAI_API_KEY: 'k', AZURE_OPENAI_ENDPOINT: 'https://example-resource.openai.azure.com' });
    const azure = g.providers.get('azure_openai')!;
    expect(azure).toMatchObject({ simulated: false, baseUrl: 'https://example-resource.openai.azure.com', auth: { header: 'api-key', prefix: '' } });
    expect(azure.operations['chat-completions']!.path).toBe('/openai/v1/chat/completions');
  });

  it('compiles the usage dialects the manifests declare', async () => {
    const g = await compile({});
    expect(g.providers.get('mistral')!.operations['chat-completions']!.usage).toEqual({ stream: 'always' });
    expect(g.providers.get('deepseek')!.operations['chat-completions']!.usage).toEqual({ stream: 'on_request', cachedInput: '/prompt_cache_hit_tokens' });
    expect(g.providers.get('openai')!.operations['chat-completions']!.usage).toBeNull();
  });
});
