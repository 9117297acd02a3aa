/** `url_inputs.allow_hosts` of gateway.config.yaml (issue 11 item 7): default empty, compiled as listed, bad entries stop the boot. */
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../../src/config/compile.js';
import { loadGateway } from '../../../src/config/load.js';
import { copyConfig } from '../../helpers/config.js';

async function settingsWith(urlInputs: unknown): Promise<unknown> {
  const copy = await copyConfig();
  try {
    await copy.editYaml('gateway.config.yaml', (doc) => { if (urlInputs === undefined) delete doc.url_inputs; else doc.url_inputs = urlInputs; });
    const gateway = await compileGateway(await loadGateway(copy.configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
    return gateway.settings.urlInputs;
  } finally {
    await rm(copy.dir, { recursive: true, force: true });
  }
}

describe('url_inputs in gateway.config.yaml', () => {
  it('defaults to an empty allow list', async () => {
    expect(await settingsWith(undefined)).toEqual({ allowHosts: [] });
  });

  it('compiles the listed host:port entries', async () => {
    expect(await settingsWith({ allow_hosts: ['127.0.0.1:9000', '[::1]:8443', 'images.internal.test:443'] }))
      .toEqual({ allowHosts: ['127.0.0.1:9000', '[::1]:8443', 'images.internal.test:443'] });
  });

  it.each([['127.0.0.1'], ['user@host:80'], ['host:80/path'], ['http://host:80']])('refuses the entry %j at load', async (entry) => {
    await expect(settingsWith({ allow_hosts: [entry] })).rejects.toThrow(/allow_hosts/);
  });
});
