/**
 * The simulator playing Black Forest Labs' FLUX.2 [flex] (src/sim/bfl.ts): a job answered 200 with its
 * polling URL, Pending then Ready, a real PNG or JPEG of the requested size at a delivery URL, the
 * vendor's 422 for bodies its schema refuses, `Task not found` for an unknown id, the prompt markers
 * for failed, moderated and never-ending jobs, and the faults scoped to bfl, bfl-result, bfl-delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageDimensions } from '../../src/files/verify/dimensions.js';
import { POLLS_UNTIL_READY } from '../../src/sim/bfl.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { storeKind } from '../helpers/db.js';
import { simCall } from './helpers.js';

describe.runIf(storeKind === 'pglite')('simulated BFL flux-2-flex', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });

  const submit = (body: unknown) => simCall(sim.url, '/v1/flux-2-flex', 'POST', body, { 'x-key': 'k' });
  const poll = (url: string) => simCall(url, '');

  it('runs a job: polling_url, Pending, then Ready with a delivery URL serving the image at the requested size and format', async () => {
    for (const [format, type] of [['png', 'image/png'], ['jpeg', 'image/jpeg']] as const) {
      const a = await submit({ prompt: 'A lighthouse.', width: 1040, height: 512, output_format: format });
      expect(a.status).toBe(200);
      expect(a.json).toMatchObject({ id: expect.any(String), polling_url: `${sim.url}/v1/get_result?id=${a.json.id}` });
      for (let i = 1; i < POLLS_UNTIL_READY; i++) expect((await poll(a.json.polling_url)).json).toMatchObject({ id: a.json.id, status: 'Pending', result: null });
      const ready = (await poll(a.json.polling_url)).json;
      expect(ready).toMatchObject({ status: 'Ready', result: { sample: expect.stringContaining(`${sim.url}/v1/sim-bfl/`) } });
      const res = await fetch(ready.result.sample);
      expect(res.headers.get('content-type')).toBe(type);
      expect(imageDimensions(Buffer.from(await res.arrayBuffer()))).toEqual({ width: 1040, height: 512 });
    }
  });

  it('answers the vendor\'s 422 for what its schema refuses, and Task not found for an unknown id', async () => {
    const bad = await submit({ prompt: 'x', width: 1000, output_format: 'webp', quality: 'high' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.map((d: { loc: string[] }) => d.loc[1]).sort()).toEqual(['output_format', 'quality', 'width']);
    expect((await submit({ width: 1024 })).json.detail[0]).toMatchObject({ loc: ['body', 'prompt'], type: 'missing' });
    expect((await simCall(sim.url, '/v1/get_result?id=nope')).json).toMatchObject({ id: 'nope', status: 'Task not found' });
  });

  it('ends jobs as the prompt\'s marker says, and returns another size or other URLs when asked', async () => {
    const end = async (prompt: string) => {
      const a = await submit({ prompt, width: 1024, height: 1024 });
      await poll(a.json.polling_url);
      return { submit: a.json, last: (await poll(a.json.polling_url)).json };
    };
    expect((await end('x sim:error')).last.status).toBe('Error');
    expect((await end('x sim:content-moderated')).last.status).toBe('Content Moderated');
    expect((await end('x sim:request-moderated')).last.status).toBe('Request Moderated');
    expect((await end('x sim:pending')).last.status).toBe('Pending');
    const resized = (await end('x sim:size=2048x2048')).last;
    expect(imageDimensions(Buffer.from(await (await fetch(resized.result.sample)).arrayBuffer()))).toEqual({ width: 2048, height: 2048 });
    expect((await submit({ prompt: 'x sim:poll-url=https://api.eu1.bfl.ai/v1/get_result?id=1' })).json.polling_url).toBe('https://api.eu1.bfl.ai/v1/get_result?id=1');
    expect((await end('x sim:sample-url=https://delivery-eu1.bfl.ai/a.png')).last.result.sample).toBe('https://delivery-eu1.bfl.ai/a.png');
  });

  it('takes faults scoped to the submit, the polls and the delivery', async () => {
    await simCall(sim.url, '/__sim/faults', 'POST', { model: 'bfl-result', fault: { status: 503, times: 1 } });
    const a = await submit({ prompt: 'x', width: 64, height: 64 });
    expect(a.status).toBe(200);
    expect((await poll(a.json.polling_url)).status).toBe(503);
    await simCall(sim.url, '/__sim/faults', 'DELETE');
  });
});
