/**
 * Contract for vision analysis (issue 12; spec 4.12): the gateway's own upstream requests, sent with a
 * real-looking key to a Prism mock playing Azure AI Vision Image Analysis 4.0 from its published spec
 * (../shared/specs/azure/image-analysis/generated.prism-oas3.json, whose path carries /computervision),
 * validate with no violation: `POST /computervision/imageanalysis:analyze` with `api-version`, the
 * `features` query (one comma-separated value of the spec's enum), the optional controls, the
 * Ocp-Apim-Subscription-Key header, and the image as raw `application/octet-stream` bytes, never a URL.
 * Prism's proxy mode corrupts binary bodies (specs README), so Prism plays the vendor as a mock, and a
 * recorder of this test's own on loopback sits in front of it: it keeps each request's URL and exact
 * bytes (Prism logs neither the query nor binary faithfully) and relays it unchanged. A request the
 * spec forbids is shown to fail, so a passing check means something.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';
import { gatewayRequestAsLogged, loggedRequestsSince, logMark, startPrismMock, stopChild, type PrismLoggedRequest, type PrismProcess } from '../helpers/prism.js';

const SPEC = resolve(projectRoot(), '../shared/specs/azure/image-analysis/generated.prism-oas3.json');
const PATH = '/computervision/imageanalysis:analyze';

/** What the recorder saw of one request. */
interface Recorded { url: URL; body: Buffer }

/** A loopback relay to `target` that records every request's URL and body bytes. */
async function startRecorder(target: string): Promise<{ url: string; seen: Recorded[]; close(): Promise<void> }> {
  const seen: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ url: new URL(req.url ?? '/', 'http://recorder'), body });
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)).map(([k, v]) => [k, String(v)]));
      void fetch(`${target}${req.url}`, { method: req.method, headers, body: new Uint8Array(body) })
        .then(async (answer) => res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer())))
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}

describe.runIf(storeKind === 'pglite')('Prism vendor contract: the Azure Image Analysis requests validate against the vendor\'s spec', () => {
  let vision: PrismProcess;
  let recorder: Awaited<ReturnType<typeof startRecorder>>;
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    vision = await startPrismMock(SPEC);
    recorder = await startRecorder(vision.url);
    t = await startTestGateway({ env: { AZURE_VISION_KEY: 'vision-test-not-real', AZURE_VISION_ENDPOINT: recorder.url } });
    key = (await t.account('5')).key;
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await recorder?.close();
    await stopChild(vision?.child);
  }, 60_000);

  /**
   * Sends a client request through the gateway; returns the one request the mock logged (checked clean,
   * keyed, octet-stream) and what the recorder saw of it: its query and bytes.
   */
  async function upstreamOf(body: unknown): Promise<{ logged: PrismLoggedRequest; status: number; query: URLSearchParams; bytes: Buffer }> {
    const before = recorder.seen.length;
    const result = await gatewayRequestAsLogged(t.url, key, vision, '/v1/vision/analyze', body, PATH);
    expect(result.logged.lines.join('\n')).toMatch(/ocp-apim-subscription-key: vision-test-not-real/);
    expect(result.logged.headers['content-type']).toBe('application/octet-stream');
    expect(recorder.seen.length).toBe(before + 1);
    const seen = recorder.seen.at(-1)!;
    expect(seen.url.pathname).toBe(PATH);
    return { ...result, query: seen.url.searchParams, bytes: seen.body };
  }

  it('sends the image bytes with api-version and every feature the gateway serves', async () => {
    const image = png(64, 64, 8);
    const { logged, query, bytes, status } = await upstreamOf({ image: image.toString('base64'), features: ['caption', 'read', 'tags', 'objects', 'people', 'smartCrops'] });
    expect(logged.headers['content-length']).toBe(String(image.length));
    expect(bytes.equals(image)).toBe(true);
    expect([...query]).toEqual([['api-version', '2023-10-01'], ['features', 'caption,read,tags,objects,people,smartCrops']]);
    // The mock's placeholder answer is a valid ImageAnalysisResult: the gateway translates it.
    expect(status).toBe(200);
  });

  it('sends the optional controls as the spec names them, and a JPEG as bytes too', async () => {
    const image = jpeg(120, 80);
    const { query, bytes } = await upstreamOf({
      image: `data:image/jpeg;base64,${image.toString('base64')}`, features: 'caption, smartCrops,tags',
      language: 'en', gender_neutral_caption: true, smartcrops_aspect_ratios: [0.75, 1.8], model_version: '2023-10-01',
    });
    expect(bytes.equals(image)).toBe(true);
    expect(Object.fromEntries(query)).toEqual({
      'api-version': '2023-10-01', features: 'caption,smartCrops,tags', language: 'en', 'gender-neutral-caption': 'true',
      'smartcrops-aspect-ratios': '0.75,1.8', 'model-version': '2023-10-01',
    });
  });

  it('would flag a request outside the spec (an unknown feature), so the checks above can fail', async () => {
    const mark = logMark(vision);
    const res = await fetch(`${vision.url}${PATH}?api-version=2023-10-01&features=faces`, {
      method: 'POST', headers: { 'content-type': 'application/octet-stream', 'ocp-apim-subscription-key': 'vision-test-not-real' }, body: new Uint8Array(png(64, 64)),
    });
    await res.arrayBuffer();
    const [logged] = await loggedRequestsSince(vision, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.violations.join('\n')).toMatch(/features/);
  });
});
