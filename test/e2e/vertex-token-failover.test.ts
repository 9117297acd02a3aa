/**
 * A Vertex token failure fails over (issue 32 items 3 and 4, the routing issue's attempts):
 * claude-sonnet-4-5 deployed on Vertex AI first (a live service account on a loopback simulator) and
 * Anthropic second (the built-in simulator). When Vertex's token endpoint fails, the attempt on Vertex
 * fails like a transport error would: Anthropic serves the request (JSON and streamed, chat and
 * messages), billed once with the deployment that served it, and the Vertex deployment's circuit
 * counts the failure: open after `circuit.failures`, so the next request goes to Anthropic without
 * asking for a token; once the endpoint is back, the half-open probe is served by Vertex again.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { expectConserved, simRequests } from '../helpers/routing.js';
import { startLiveVertex, type LiveVertex } from '../helpers/vertex.js';

const OFFERING = 'claude-sonnet-4-5';
const ANTHROPIC = 'claude-sonnet-4-5-20250929';
const VERTEX = 'claude-sonnet-4-5@20250929';
const OPEN_SECONDS = 1;

describeStore('a Vertex token failure fails over to the next deployment', () => {
  let v: LiveVertex;
  beforeAll(async () => {
    const copy = await copyConfig();
    await copy.editYaml('providers/anthropic.yaml', (doc) => {
      const offering = doc.offerings.find((o: { id: string }) => o.id === OFFERING);
      offering.deployments = [
        { provider: 'vertex', upstream_model: VERTEX, priority: 0 },
        { provider: 'anthropic', upstream_model: ANTHROPIC, priority: 1 },
      ];
    });
    await copy.editYaml('gateway.config.yaml', (doc) => {
      doc.routing = { ...(doc.routing ?? {}), retry_same_deployment: 0, backoff_ms: { initial: 1, max: 1 }, circuit: { failures: 2, window_seconds: 60, open_seconds: OPEN_SECONDS } };
    });
    v = await startLiveVertex({ configFile: copy.configFile });
  });
  afterAll(() => v?.dispose());

  const vertexDeployment = () => v.t.gw.generation().gateway.offerings.get(OFFERING)!.deployments.find((d) => d.provider.id === 'vertex')!;
  const circuit = () => v.t.gw.runtime.deployments.state(vertexDeployment(), vertexDeployment().offering.routing);
  const servedByAnthropic = async () => (await simRequests(v.t, ANTHROPIC)).length;
  const servedByVertex = async () => (await v.requests(VERTEX)).length;

  it('serves from Anthropic while Vertex has no token, billed once each; the circuit opens and then skips Vertex', async () => {
    const a = await v.t.account('5');
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${v.t.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: a.key, baseURL: v.t.url, maxRetries: 0 });
    await v.failTokens(500);
    const tokens = await v.sa.tokenRequests();
    try {
      // 1. Chat JSON: the Vertex attempt fails on its token, Anthropic answers.
      const { data: chat, response: chatRes } = await openai.chat.completions.create({ model: OFFERING, max_tokens: 16, messages: [{ role: 'user', content: 'Which cloud answers?' }] }).withResponse();
      expect(chat.choices[0]!.message.content).toBeTruthy();
      expect(chatRes.headers.get('x-gateway-provider')).toBe('anthropic');
      expect(chatRes.headers.get('x-gateway-attempts')).toBe('2');
      expect(await v.sa.tokenRequests()).toBe(tokens + 1);
      expect(await servedByAnthropic()).toBe(1);
      expect(circuit()).toBe('closed');

      // 2. Messages streamed: the same, before any content reached the client; the second failure opens the circuit.
      const { data: stream, response: streamRes } = await anthropic.messages.create({ model: OFFERING, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Stream it.' }] }).withResponse();
      let text = '';
      for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      expect(text).not.toBe('');
      expect(streamRes.headers.get('x-gateway-provider')).toBe('anthropic');
      expect(streamRes.headers.get('x-gateway-attempts')).toBe('2');
      expect(await v.sa.tokenRequests()).toBe(tokens + 2);
      expect(circuit()).toBe('open');

      // 3. Chat streamed, the circuit open: Anthropic at once, no token asked for.
      const { data: chunks, response: openRes } = await openai.chat.completions.create({ model: OFFERING, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'And now?' }] }).withResponse();
      let streamed = '';
      for await (const chunk of chunks) streamed += chunk.choices[0]?.delta.content ?? '';
      expect(streamed).not.toBe('');
      expect(openRes.headers.get('x-gateway-attempts')).toBe('1');
      expect(await v.sa.tokenRequests()).toBe(tokens + 2);
      expect(await servedByAnthropic()).toBe(3);
    } finally {
      await v.clearFaults();
    }
    expect(await servedByVertex()).toBe(0);

    // Three answers, each billed once, at the offering's price, by the deployment that served it.
    const usage = await expectConserved(v.t, a.id, 5_000_000_000n);
    expect(usage).toHaveLength(3);
    expect(usage.every((row) => row.model === OFFERING && row.deployment === `anthropic/${ANTHROPIC}` && row.amountNano > 0n)).toBe(true);
    // The endpoint's 500 may pass: each failure is a `token` attempt failure (a refused grant would be `token_refused`).
    const metrics = await (await fetch(`${v.t.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`gateway_upstream_attempts_total\\{provider="vertex",deployment="vertex/${VERTEX}",outcome="token"\\} 2`));
  });

  it('once the token endpoint is back, the half-open probe is served by Vertex and the circuit closes', async () => {
    expect(circuit()).toBe('open');
    await new Promise((resolve) => setTimeout(resolve, OPEN_SECONDS * 1000 + 100));
    expect(circuit()).toBe('half_open');
    const a = await v.t.account('1');
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${v.t.url}/v1`, maxRetries: 0 });
    const { data: chat, response } = await openai.chat.completions.create({ model: OFFERING, max_tokens: 16, messages: [{ role: 'user', content: 'Vertex again?' }] }).withResponse();
    expect(chat.choices[0]!.message.content).toBeTruthy();
    expect(response.headers.get('x-gateway-provider')).toBe('vertex');
    expect(await servedByVertex()).toBe(1);
    expect(circuit()).toBe('closed');
    const usage = await expectConserved(v.t, a.id, 1_000_000_000n);
    expect(usage.map((row) => row.deployment)).toEqual([`vertex/${VERTEX}`]);
  });
});
