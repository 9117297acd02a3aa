/**
 * Structured output on messages-format offerings, end to end (issue 31 items 1 and 13): chat
 * completions' response_format json_schema / json_object on a Claude model with `structured_output:
 * true` answered with JSON (the simulator honours the vendor's output_config.format and the forced
 * json_object tool) and billed from the vendor's usage; the messages route's output_config.format
 * likewise. An offering without the flag (claude-haiku-4-5 with it removed from a copy of the
 * manifests) and a schema the vendor would refuse are 400s in the client's format: nothing sent,
 * nothing charged.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { settled, type Account } from '../helpers/chat.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false };
const jsonSchema = { type: 'json_schema' as const, json_schema: { name: 'weather', strict: true, schema } };

/** claude-sonnet-4-5: 3 in / 15 out USD per 1M tokens, rounded once. */
const sonnetNano = (input: number, output: number): bigint => (BigInt(input) * 3_000_000_000n + BigInt(output) * 15_000_000_000n + 500_000n) / 1_000_000n;

describeStore('structured output on messages-format offerings', () => {
  let t: TestGateway;
  let a: Account;
  let client: OpenAI;

  beforeAll(async () => {
    const copy = await copyConfig();
    await copy.editYaml('providers/anthropic.yaml', (doc) => {
      delete (doc.offerings as Array<Record<string, unknown>>).find((o) => o.id === 'claude-haiku-4-5')!.structured_output;
    });
    t = await startTestGateway({ configFile: copy.configFile });
    a = { ...(await t.account('5')), t };
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const last = () => fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ path: string; body: Record<string, any> }>);

  it('answers json_schema with JSON that fits it, sent as output_config.format, billed from the vendor usage', async () => {
    const before = await settled(a);
    const completion = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Weather in Paris' }], response_format: jsonSchema });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: 'sim', celsius: 1 });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect((await last()).body.output_config).toEqual({ format: { type: 'json_schema', schema } });
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(sonnetNano(completion.usage!.prompt_tokens, completion.usage!.completion_tokens));
  });

  it('streams json_object as content (the forced tool read back), usage as charged', async () => {
    const before = await settled(a);
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Weather in Paris as JSON with keys city and celsius' }],
      response_format: { type: 'json_object' }, stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      usage = chunk.usage ?? usage;
    }
    expect([JSON.parse(text), finish]).toEqual([{ city: 'sim', celsius: 1 }, 'stop']);
    expect((await last()).body).toMatchObject({ tools: [{ name: 'json_object', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'json_object' } });
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(sonnetNano(usage!.prompt_tokens, usage!.completion_tokens));
  });

  it('forwards output_config.format on the messages route, and its answer is the JSON text', async () => {
    const res = await fetch(`${t.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': a.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Weather?' }], output_config: { format: { type: 'json_schema', schema } } }),
    });
    const body = await res.json() as { content: Array<{ type: string; text: string; citations?: unknown }> };
    expect(res.status).toBe(200);
    expect(body.content).toEqual([{ type: 'text', text: '{"city":"sim","celsius":1}' }]);
  });

  it('refuses structured output where the offering does not declare it, and a schema the vendor would refuse: 400s, nothing sent or charged', async () => {
    const before = await settled(a);
    const requests = t.sim.requests;
    const bounded = { ...jsonSchema, json_schema: { ...jsonSchema.json_schema, schema: { ...schema, properties: { ...schema.properties, celsius: { type: 'number', minimum: -90 } } } } };
    for (const [model, response_format, detail] of [
      ['claude-haiku-4-5', jsonSchema, 'model "claude-haiku-4-5" does not take structured output'],
      ['claude-haiku-4-5', { type: 'json_object' as const }, 'does not take structured output'],
      ['claude-sonnet-4-5', bounded, 'schema.properties.celsius uses "minimum"'],
    ] as const) {
      const error = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'JSON please' }], response_format }).catch((e: unknown) => e) as InstanceType<typeof OpenAI.APIError>;
      expect([error.status, (error.error as { code?: string }).code, (error.error as { param?: string }).param]).toEqual([400, 'unsupported_parameter', 'response_format']);
      expect(error.message).toContain(detail);
    }
    const messages = await fetch(`${t.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': a.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'x' }], output_config: { format: { type: 'json_schema', schema } } }),
    });
    const refused = await messages.json() as { type: string; error: { type: string; message: string } };
    expect([messages.status, refused.type, refused.error.type]).toEqual([400, 'error', 'invalid_request_error']);
    expect(refused.error.message).toContain('output_config.format');
    expect(t.sim.requests).toBe(requests);
    const after = await settled(a);
    expect([after.balanceNano, after.rows]).toEqual([before.balanceNano, before.rows]);
  });
});
