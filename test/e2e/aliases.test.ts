/**
 * Model aliases (issue 31 item 4): an offering's `aliases` are accepted wherever a model id is, served
 * and billed as the offering (the usage row names the offering's id), and the answer's `model` is the
 * id the client asked for. Every route that takes a model is driven with its sample request twice, by
 * the offering's id and by an alias, and must bill both alike; an unknown alias is the usual 400 in the
 * client's format with nothing charged.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { encodeMultipart } from '../helpers/fuzz-requests.js';
import { fuzzRoutes } from '../helpers/fuzz.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { FORM_BOUNDARY, FORM_SAMPLE, SAMPLE, sampleRequest, send, type SampleRequest } from '../helpers/route-samples.js';

/** The alias every offering gets in this file's configuration, besides the shipped ones. */
const aliasOf = (id: string): string => `${id}-via-alias`;

/** What a usage row bills, without its ids. */
type Billed = [string | null, string, string, bigint, bigint];

describeStore('model aliases (issue 31 item 4)', () => {
  let t: TestGateway;

  beforeAll(async () => {
    const copy = await copyConfig();
    for (const file of await readdir(join(copy.dir, 'providers'))) {
      await copy.editYaml(`providers/${file}`, (doc) => {
        for (const o of doc.offerings ?? []) o.aliases = [...(o.aliases ?? []), aliasOf(o.id)];
      });
    }
    t = await startTestGateway({ configFile: copy.configFile });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  /** The rows the account gained since it had `seen` of them, oldest first, as billed. */
  async function newRows(accountId: string, seen: number): Promise<Billed[]> {
    const rows = (await t.usage(accountId, { limit: 500 })).data;
    return rows.slice(0, rows.length - seen).reverse().map((r) => [r.model, r.kind, r.unit, r.quantity, r.amountNano]);
  }

  /** The sample with `model` replaced by `alias`. */
  function withModel(req: SampleRequest, routeId: string, alias: string): SampleRequest {
    if (SAMPLE[routeId]) return { ...req, body: JSON.stringify({ ...SAMPLE[routeId], model: alias }) };
    return { ...req, body: encodeMultipart(FORM_SAMPLE[routeId]!.map((p) => (p.name === 'model' ? { ...p, data: alias } : p)), FORM_BOUNDARY) };
  }

  it('serves and bills every route that takes a model alike by an alias, and answers with the alias', async () => {
    const account = await t.account('20');
    const routes = fuzzRoutes().filter((r) => typeof SAMPLE[r.id]?.model === 'string' || FORM_SAMPLE[r.id]?.some((p) => p.name === 'model'));
    // chat, responses, messages, count tokens, embeddings, rerank, images, audio, speech, video, documents...
    expect(routes.map((r) => r.id)).toEqual(expect.arrayContaining(['chat-completions', 'responses', 'messages', 'count-tokens', 'embeddings', 'rerank', 'images-generations', 'images-edits', 'audio-transcriptions', 'speech']));
    for (const route of routes) {
      const model = (SAMPLE[route.id]?.model ?? FORM_SAMPLE[route.id]!.find((p) => p.name === 'model')!.data) as string;
      const byId = await sampleRequest({ t, account }, route);
      const seen = (await t.usage(account.id, { limit: 500 })).data.length;
      const original = await send(t, byId);
      const aliased = await send(t, withModel(byId, route.id, aliasOf(model)));
      expect([original.status, aliased.status], `${route.id}: ${aliased.text.slice(0, 300)}`).toEqual([200, 200]);
      const [first, second, ...more] = await newRows(account.id, seen);
      expect(more, route.id).toEqual([]);
      // The row names the offering, priced as for its own id (the simulator answers both alike).
      expect(second, route.id).toEqual(first);
      if (first) expect(first[0], route.id).toBe(model);
      // A video job is kept under its offering's id and read back later (GET /v1/videos/generations/{id}): its answers name the offering.
      if (route.id !== 'videos-generations' && aliased.headers.get('content-type')?.startsWith('application/json')) {
        const answer = JSON.parse(aliased.text) as { model?: unknown };
        if (typeof answer.model === 'string') expect(answer.model, route.id).toBe(aliasOf(model));
      }
    }
  });

  it('takes the shipped dated ids with the official SDKs: chat streamed, messages, count tokens, responses, rerank, the models list', async () => {
    const account = await t.account('5');
    const openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: t.url, apiKey: account.key, maxRetries: 0 });
    let streamedModel = '';
    for await (const chunk of await openai.chat.completions.create({ model: 'gpt-4o-mini-2024-07-18', messages: [{ role: 'user', content: 'Hi' }], stream: true })) streamedModel ||= chunk.model;
    expect(streamedModel).toBe('gpt-4o-mini-2024-07-18');
    const message = await anthropic.messages.create({ model: 'claude-haiku-4-5-20251001', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.model).toBe('claude-haiku-4-5-20251001');
    expect((await anthropic.messages.countTokens({ model: 'claude-sonnet-4-5-20250929', messages: [{ role: 'user', content: 'Hi' }] })).input_tokens).toBeGreaterThan(0);
    const response = await openai.responses.create({ model: 'gpt-4o-2024-08-06', input: 'Hi' });
    expect(response.output_text).toMatch(/\S/);
    // The client's `models` list (OpenRouter's convention) takes aliases too.
    const listed = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], models: ['claude-haiku-4-5-20251001'] } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(listed.model).toBe('gpt-4o-mini');
    const rerank = await fetch(`${t.url}/v1/rerank`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'rerank-v3.5', query: 'capital of France', documents: ['Berlin', 'Paris'] }) });
    expect(rerank.status).toBe(200);
    expect(((await rerank.json()) as { model: string }).model).toBe('rerank-v3.5');
    const rows = (await t.usage(account.id, { limit: 50 })).data.map((r) => r.model).reverse();
    expect(rows).toEqual(['gpt-4o-mini', 'claude-haiku-4-5', 'gpt-4o', 'gpt-4o-mini', 'rerank-pro']);
  });

  it('refuses an unknown alias with a 400 in the client\'s format, nothing charged', async () => {
    const account = await t.account('1');
    const openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: t.url, apiKey: account.key, maxRetries: 0 });
    const before = t.sim.requests;
    await expect(openai.chat.completions.create({ model: 'gpt-4o-2099-01-01', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 400, code: 'model_not_found', param: 'model' });
    const refused = await anthropic.messages.create({ model: 'claude-sonnet-4-5-20990101', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    // The messages format's error body: {type: "error", error: {type, message}}.
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('claude-sonnet-4-5-20990101') } });
    await expect(openai.images.generate({ model: 'dall-e-3-2099', prompt: 'x' })).rejects.toMatchObject({ status: 400, code: 'model_not_found' });
    expect(t.sim.requests).toBe(before);
    expect((await t.usage(account.id)).data).toEqual([]);
    expect((await t.settled(account.id)).balanceNano).toBe(1_000_000_000n);
  });
});
