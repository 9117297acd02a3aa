/**
 * The simulator's OpenAI `POST /v1/moderations` (src/sim/openai-moderations.ts): one result per text
 * (a list of parts is one input), every category of the response schema scored, deterministic, a
 * plain "kill" flagged as violence, `category_applied_input_types` on omni models only, and
 * OpenAI-shaped errors for what the API refuses.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../src/sim/openai-moderations.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { simCall } from './helpers.js';

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const moderate = (body: unknown) => simCall(sim.url, '/v1/moderations', 'POST', body);

describe('OpenAI POST /v1/moderations (simulator)', () => {
  it('scores each text on every category, deterministically, flagging a plain threat', async () => {
    const res = await moderate({ model: 'omni-moderation-latest', input: ['Have a nice day.', 'I will kill them.'] });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ id: expect.stringMatching(/^modr-/), model: 'omni-moderation-latest' });
    const [calm, threat] = res.json.results;
    expect(Object.keys(calm.category_scores)).toEqual([...CATEGORIES]);
    expect([calm.flagged, threat.flagged, threat.categories.violence, threat.categories.hate]).toEqual([false, true, true, false]);
    expect(calm.category_applied_input_types.violence).toEqual(['text']);
    expect((await moderate({ model: 'omni-moderation-latest', input: ['Have a nice day.', 'I will kill them.'] })).json).toEqual(res.json);
  });

  it('scores text and image parts as one input; text models have no applied input types and take no images', async () => {
    const parts = [{ type: 'text', text: 'A cat.' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }];
    const omni = await moderate({ input: parts });
    expect(omni.json.results).toHaveLength(1);
    expect(omni.json.results[0].category_applied_input_types).toMatchObject({ sexual: ['text', 'image'], harassment: ['text'] });
    const text = await moderate({ model: 'text-moderation-latest', input: 'A cat.' });
    expect(text.json.results[0].category_applied_input_types).toBeUndefined();
    expect((await moderate({ model: 'text-moderation-latest', input: parts })).status).toBe(400);
  });

  it('refuses an unknown model (404), a malformed input and unknown fields, in OpenAI\'s error shape', async () => {
    expect((await moderate({ model: 'nope', input: 'x' })).json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    for (const body of [{ input: [] }, { input: 5 }, {}, { input: [{ type: 'image_url', image_url: {} }] }]) {
      const res = await moderate(body);
      expect([res.status, res.json.error.param], JSON.stringify(body)).toEqual([400, 'input']);
    }
    expect((await moderate({ input: 'x', categories: ['Hate'] })).json.error.param).toBe('categories');
  });
});
