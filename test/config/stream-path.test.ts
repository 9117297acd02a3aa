/**
 * Operations whose model is in the URL and whose streaming is another method (Gemini's
 * generateContent / streamGenerateContent): `{model}` needs no route path_params (it is the served
 * upstream model), `stream_path` is the path of a streamed request and needs `answer: {type: sse}`,
 * and another `{name}` in a stream_path must be resolved like one in `path`.
 */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { copyConfig } from '../helpers/config.js';

async function compiled(edit?: (c: Awaited<ReturnType<typeof copyConfig>>) => Promise<void>) {
  const copy = await copyConfig();
  if (edit) await edit(copy);
  return loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' }));
}

describe('stream_path and {model}', () => {
  it('compiles the shipped google_ai operation: {model} unresolved by any route, the stream path kept', async () => {
    const gateway = await compiled();
    const op = gateway.providers.get('google_ai')!.operations['generate-content']!;
    expect(op).toMatchObject({ path: '/v1beta/models/{model}:generateContent', streamPath: '/v1beta/models/{model}:streamGenerateContent?alt=sse', answer: 'sse' });
    expect(gateway.offerings.get('google-ai-gemini-2.5-pro')?.upstreamModel).toBe('gemini-2.5-pro');
  });

  it('refuses a stream_path on an operation that does not answer sse', async () => {
    const error = await compiled((c) => c.editYaml('providers/google-ai.yaml', (d) => {
      // An operation no route calls, so the provider's own check speaks (a route's would first refuse a JSON-only operation it streams on).
      d.operations.unused = { method: 'POST', path: '/v1beta/models/{model}:countTokens', stream_path: '/v1beta/models/{model}:other', format: 'gemini-generate-content' };
    })).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).path).toBe('/operations/unused/stream_path');
    expect((error as ManifestError).reason).toMatch(/answer: \{type: sse\}/);
  });

  it('refuses a {name} of the stream_path no route resolves', async () => {
    const error = await compiled((c) => c.editYaml('providers/google-ai.yaml', (d) => { d.operations['generate-content'].stream_path = '/v1beta/{tenant}/models/{model}:streamGenerateContent?alt=sse'; })).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).reason).toMatch(/declare where \{tenant\} comes from/);
  });
});
