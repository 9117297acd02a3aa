/**
 * Public URLs as inputs, end to end (issue 11 item 7; spec 4.16 video `image`): the gateway fetches an
 * `image` URL with the SSRF-safe fetcher and sends the vendor the verified bytes, never the URL. Every
 * bypass spelling that resolves to loopback is a 400 naming `image` with nothing reserved, while a
 * canary on loopback counts connections (it must stay at zero); a redirect from an allow-listed host
 * to a refused one is refused; the allow-listed host (`url_inputs.allow_hosts`, how tests serve a file
 * from loopback as if it were public) serves a reference image that reaches the vendor as a data URL.
 * Host names resolve through an injected resolver: no test traffic leaves loopback.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { expectUntouched, postJson } from '../helpers/native.js';
import { BYPASSES, BYPASS_NAMES, startCanary, startServer, tableResolver, type Canary, type TestServer } from '../upstream/fetch/servers.js';

describe('video reference image URLs through the gateway (SSRF)', () => {
  let t: TestGateway;
  let copy: ConfigCopy;
  let canary: Canary;
  let allowed: TestServer;
  const frame = png(1280, 720, 7);

  beforeAll(async () => {
    canary = await startCanary();
    allowed = await startServer({
      '/frame.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(frame),
      '/to-canary': (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/` }).end(),
      '/to-canary-name': (_req, res) => res.writeHead(301, { location: `https://localhost:${canary.port}/x.png` }).end(),
    });
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.url_inputs = { allow_hosts: [`127.0.0.1:${allowed.port}`] }; });
    t = await startTestGateway({ configFile: copy.configFile, resolver: tableResolver(BYPASS_NAMES) });
  });
  afterAll(async () => {
    await t?.dispose();
    await canary?.close();
    await allowed?.close();
    if (copy) await rm(copy.dir, { recursive: true, force: true });
  });

  const submit = (key: string, image: string) => postJson(t, '/v1/videos/generations', key, { model: 'sora-2', prompt: 'From this frame.', image });

  it('refuses every bypass URL with a 400 naming image, reserving nothing; the canary is never reached', async () => {
    const account = await t.account('5');
    const urls = BYPASSES(canary.port);
    expect(urls.length).toBeGreaterThanOrEqual(30);
    for (const url of urls) {
      const answer = await submit(account.key, url);
      expect([answer.status, answer.json.error?.param], url).toEqual([400, 'image']);
    }
    expect(canary.connections()).toBe(0);
    await expectUntouched(t, account, 5_000_000_000n);
  });

  it('refuses a redirect from the allow-listed host to a refused address', async () => {
    const account = await t.account('5');
    for (const path of ['/to-canary', '/to-canary-name']) {
      const answer = await submit(account.key, `http://127.0.0.1:${allowed.port}${path}`);
      expect([answer.status, answer.json.error.param]).toEqual([400, 'image']);
      expect(answer.json.error.message).toContain('redirects to a refused URL');
    }
    expect(canary.connections()).toBe(0);
    await expectUntouched(t, account, 5_000_000_000n);
  });

  it('fetches the allow-listed image and hands the vendor its bytes, never the URL', async () => {
    const account = await t.account('5');
    const answer = await submit(account.key, `http://127.0.0.1:${allowed.port}/frame.png`);
    expect(answer.status).toBe(200);
    const sent = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { body: { input_reference: { image_url: string } } };
    expect(sent.body.input_reference.image_url).toBe(`data:image/png;base64,${frame.toString('base64')}`);
  });
});
