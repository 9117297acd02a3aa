/** `observability.traces` of gateway.config.yaml (issue 33 item 1): compiled to settings.traces; strict like every key. */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { copyConfig } from '../helpers/config.js';

async function compiled(observability: unknown): Promise<Awaited<ReturnType<typeof compileGateway>> | ManifestError> {
  const copy = await copyConfig();
  await copy.editYaml('gateway.config.yaml', (doc) => { if (observability === undefined) delete doc.observability; else doc.observability = observability; });
  return loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' })).catch((e: unknown) => e as ManifestError);
}

describe('observability.traces', () => {
  it('defaults content to false, absent or as shipped, and takes true', async () => {
    for (const [given, content] of [[undefined, false], [{}, false], [{ traces: {} }, false], [{ traces: { content: false } }, false], [{ traces: { content: true } }, true]] as const) {
      const gateway = await compiled(given);
      expect(gateway, JSON.stringify(given)).not.toBeInstanceOf(ManifestError);
      expect((gateway as Exclude<typeof gateway, ManifestError>).settings.traces).toEqual({ content });
    }
  });

  it('refuses an unknown key and a content that is not a boolean', async () => {
    const typo = await compiled({ traces: { contents: true } });
    expect(typo).toBeInstanceOf(ManifestError);
    expect((typo as ManifestError).reason).toBe('unknown key "contents"');
    const text = await compiled({ traces: { content: 'yes' } });
    expect(text).toBeInstanceOf(ManifestError);
    expect((text as ManifestError).path).toBe('/observability/traces/content');
  });
});
