/**
 * One offering on three clouds (issue 32 item 4): claude-sonnet-4-5 with deployments on Anthropic,
 * Bedrock (Converse, SigV4) and Vertex AI (rawPredict, a service account's token), all simulated.
 * A fault on the first fails over to the next, in priority order, through chat completions and
 * messages, streaming or not; each request is billed once at the offering's price; the catalogue
 * lists the offering once.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectConserved, simRequests } from '../helpers/routing.js';

const ANTHROPIC = 'claude-sonnet-4-5-20250929';
const BEDROCK = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const VERTEX = 'claude-sonnet-4-5@20250929';

describeStore('one offering on Anthropic, Bedrock and Vertex (issue 32 item 4)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    const copy = await copyConfig();
    await copy.editYaml('providers/anthropic.yaml', (doc) => {
      const offering = doc.offerings.find((o: { id: string }) => o.id === 'claude-sonnet-4-5');
      offering.deployments = [
        { provider: 'anthropic', upstream_model: ANTHROPIC, priority: 0 },
        { provider: 'bedrock', upstream_model: BEDROCK, priority: 1 },
        { provider: 'vertex', upstream_model: VERTEX, priority: 2 },
      ];
    });
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.routing = { ...(doc.routing ?? {}), retry_same_deployment: 0, backoff_ms: { initial: 1, max: 1 } }; });
    t = await startTestGateway({ configFile: copy.configFile });
  });
  afterAll(() => t?.dispose());

  const served = async (model: string) => (await simRequests(t, model)).length;

  it('serves from Anthropic, then Bedrock, then Vertex as each fails; billed once each', async () => {
    const a = await t.account('5');
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: a.key, baseURL: t.url, maxRetries: 0 });
    const ask = () => openai.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Which cloud answers?' }], max_tokens: 16 });
    const before = { anthropic: await served(ANTHROPIC), bedrock: await served(BEDROCK), vertex: await served(VERTEX) };

    expect((await ask()).model).toBe('claude-sonnet-4-5');
    expect(await served(ANTHROPIC)).toBe(before.anthropic + 1);

    await t.fault({ status: 529 }, ANTHROPIC);
    const viaBedrock = await ask();
    expect(viaBedrock.choices[0]!.message.content).toBeTruthy();
    expect(await served(BEDROCK)).toBe(before.bedrock + 1);
    const streamed = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Stream it.' }] });
    let text = '';
    for await (const event of streamed) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    expect(text).not.toBe('');
    expect(await served(BEDROCK)).toBe(before.bedrock + 2);

    await t.fault({ status: 503 }, BEDROCK);
    const viaVertex = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'And now?' }] });
    expect(viaVertex.model).toBe('claude-sonnet-4-5');
    expect(await served(VERTEX)).toBe(before.vertex + 1);
    await t.clearFaults();

    // Four answers, each billed once at the offering's price, with the deployment that served it.
    const usage = await expectConserved(t, a.id, 5_000_000_000n);
    const byRequest = new Map<string, string | null | undefined>();
    for (const row of usage) byRequest.set((row as unknown as { requestId: string }).requestId, row.deployment);
    expect(byRequest.size).toBe(4);
    expect([...byRequest.values()].sort()).toEqual([`anthropic/${ANTHROPIC}`, `bedrock/${BEDROCK}`, `bedrock/${BEDROCK}`, `vertex/${VERTEX}`].sort());
    for (const row of usage) expect(row.model).toBe('claude-sonnet-4-5');
  });

  it('counts tokens through the one deployment whose vendor has the operation (Anthropic)', async () => {
    const a = await t.account('1');
    const anthropic = new Anthropic({ apiKey: a.key, baseURL: t.url, maxRetries: 0 });
    const counted = await anthropic.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const serving = t.gw.generation().gateway.offerings.get('claude-sonnet-4-5')!;
    const route = t.gw.generation().gateway.routes.find((r) => r.manifest.path === '/v1/messages/count_tokens')!;
    expect(serving.routeDeployments?.get(route)?.map((d) => d.provider.id)).toEqual(['anthropic']);
  });

  it('lists the offering once in the catalogue and the models list', async () => {
    const a = await t.account('1');
    const models = await (await request(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${a.key}` } })).body.json() as { data: Array<{ id: string }> };
    expect(models.data.filter((m) => m.id === 'claude-sonnet-4-5')).toHaveLength(1);
    const catalog = JSON.stringify(await (await request(`${t.url}/api/public/catalog`)).body.json());
    expect(catalog.split('"claude-sonnet-4-5"').length - 1).toBe(1);
  });
});
