/**
 * Contract for the flex image model (issue 11 item 4; spec 4.14): Prism plays Black Forest Labs from
 * its published spec (../shared/specs/bfl/bfl-flux2flex+get_result.openapi.yaml) behind a gateway that
 * holds a real-looking key, and the request the gateway sends for flux-2-flex must reach
 * POST /v1/flux-2-flex with the `x-key` header and pass Prism's validation with no violation. Prism's
 * answer is a placeholder (polling_url "string", which resolves on Prism's own origin and answers 404),
 * so the job cannot finish: the client gets a 502 and pays nothing; the simulator and the end-to-end tests check the job, the image and the billing.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched } from '../helpers/native.js';
import { compilePrismRequestBodies, logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismProcess } from '../helpers/prism.js';

const SPEC = resolve(projectRoot(), '../shared/specs/bfl/bfl-flux2flex+get_result.openapi.yaml');
const SUBMIT = 'POST /v1/flux-2-flex';

describe.runIf(storeKind === 'pglite')('Prism vendor contract: BFL flux-2-flex requests validate against the vendor spec', () => {
  let prism: PrismProcess;
  let t: TestGateway;

  beforeAll(async () => {
    prism = await startPrismMock(SPEC);
    t = await startTestGateway({ env: { BFL_API_KEY: 'bfl-test-not-real', BFL_BASE_URL: prism.url } });
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await stopChild(prism?.child);
  }, 60_000);

  it('compiles the submit body schema as Prism does (not skipped)', async () => {
    const bodies = await compilePrismRequestBodies(SPEC, (op) => `${op.method} ${op.path}` === SUBMIT);
    expect(bodies.map((b) => `${b.method} ${b.path} ${b.mediaType}`)).toEqual([`${SUBMIT} application/json`]);
    expect(bodies.filter((b) => b.error)).toEqual([]);
  }, 120_000);

  it.each([
    [{ size: '1024x1024' }, { width: 1024, height: 1024, output_format: 'png' }],
    [{ size: '2048x2048', output_format: 'jpeg' }, { width: 2048, height: 2048, output_format: 'jpeg' }],
    [{ size: '64x1040', output_format: 'png', response_format: 'b64_json', user: 'u-1' }, { width: 64, height: 1040, output_format: 'png' }],
  ])('submit %j: POST /v1/flux-2-flex with the key and a body the spec accepts; the made-up job ends in a 502, nothing charged', async (over, sent) => {
    const account = await t.account('1');
    const mark = logMark(prism);
    const res = await fetch(`${t.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'flux-2-flex', prompt: 'A lighthouse at dusk.', ...over }),
    });
    const text = await res.text();
    const [submit] = await loggedRequestsSince(prism, mark, 1);
    const detail = `client ${res.status}: ${text.slice(0, 500)}\nprism:\n${submit?.lines.join('\n').slice(0, 4000)}`;
    expect(`${submit!.method} ${submit!.path}`, detail).toBe(SUBMIT);
    expect(submit!.violations, detail).toEqual([]);
    expect(submit!.passed, detail).toBe(true);
    expect(submit!.headers['x-key'], detail).toBe('bfl-test-not-real');
    expect(submit!.headers.authorization, detail).toBeUndefined();
    expect(submit!.body, detail).toEqual({ prompt: 'A lighthouse at dusk.', ...sent });
    // Prism's placeholder polling_url is no job the gateway can finish (its poll answers 404): an upstream error, not billed.
    expect(res.status, detail).toBe(502);
    await expectUntouched(t, account, 1_000_000_000n);
  });

  it('negative control: Prism rejects a body without the required prompt, so the passes above mean something', async () => {
    const mark = logMark(prism);
    const res = await fetch(`${prism.url}/v1/flux-2-flex`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-key': 'k' }, body: JSON.stringify({ width: 1024, height: 1024 }) });
    await res.text();
    const [logged] = await loggedRequestsSince(prism, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.passed).toBe(false);
    expect(logged!.lines.join('\n')).toMatch(/prompt/);
  });
});
