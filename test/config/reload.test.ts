/** Hot reload: a valid edit is swapped in; an invalid one is refused and the old config keeps serving. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManifestError } from '../../src/config/errors.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

async function catalogPrice(url: string, model: string): Promise<string | undefined> {
  const body = await fetch(`${url}/api/public/catalog`).then((r) => r.json() as Promise<{ data: Array<{ id: string; billing: { prices: { input: string } } }> }>);
  return body.data.find((o) => o.id === model)?.billing.prices.input;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describeStore('hot reload', () => {
  let copy: ConfigCopy;
  let t: TestGateway;
  const logs: string[] = [];

  beforeAll(async () => {
    copy = await copyConfig();
    t = await startTestGateway({ configFile: copy.configFile, watch: true, log: (m) => logs.push(m) });
  });
  afterAll(async () => { await t?.dispose(); });

  it('swaps in a valid edit atomically', async () => {
    expect(await catalogPrice(t.url, 'gpt-4o-mini')).toBe('0.15');
    await copy.editYaml('providers/openai.yaml', (d) => { d.offerings[0].billing.prices.input = '0.2'; });
    await until(async () => (await catalogPrice(t.url, 'gpt-4o-mini')) === '0.2', 'the new price');
  });

  it('refuses an invalid edit and keeps serving the previous configuration', async () => {
    await copy.editYaml('providers/openai.yaml', (d) => { d.offerings[0].billing.prices.input = 'cheap'; });
    await until(async () => logs.some((l) => l.startsWith('configuration refused')), 'the refusal');
    expect(await catalogPrice(t.url, 'gpt-4o-mini')).toBe('0.2');
    const error = await t.gw.reload();
    expect(error).toBeInstanceOf(ManifestError);
    expect(error?.message).toMatch(/providers\/openai\.yaml:\d+: \/offerings\/0\/billing\/prices\/input: must match pattern/);
    await copy.editYaml('providers/openai.yaml', (d) => { d.offerings[0].billing.prices.input = '0.15'; });
    await until(async () => (await catalogPrice(t.url, 'gpt-4o-mini')) === '0.15', 'the repaired config');
  });

  it('finishes a request in flight on the configuration it started with', async () => {
    const { id, key } = await t.account('1');
    await t.fault({ latency_ms: 1500, times: 1 });
    const inflight = fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow one' }] }),
    });
    await new Promise((r) => setTimeout(r, 300));
    await copy.editYaml('providers/openai.yaml', (d) => { d.offerings[0].billing.prices.input = '1'; d.offerings[0].billing.prices.output = '1'; });
    await until(async () => (await catalogPrice(t.url, 'gpt-4o-mini')) === '1', 'the new price');
    const res = await inflight;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const [row] = (await t.usage(id, { limit: 1 })).data;
    const oldPrice = (BigInt(body.usage.prompt_tokens) * 150_000_000n + BigInt(body.usage.completion_tokens) * 600_000_000n + 500_000n) / 1_000_000n;
    expect(row!.amountNano).toBe(oldPrice);
  });
});

it('an invalid manifest stops the boot with file, path and reason', async () => {
  const copy = await copyConfig();
  await copy.editYaml('routes/chat-completions.yaml', (d) => { d.stream = { when: 'stream' }; });
  const main = join(projectRoot(), 'dist/src/main.js');
  const run = promisify(execFile)(process.execPath, [main], { env: { ...process.env, GATEWAY_CONFIG: copy.configFile, PORT: '0', GATEWAY_DATA_DIR: ':memory:' } });
  const error = (await run.then(() => null, (e: unknown) => e)) as { code: number; stderr: string } | null;
  expect(error?.code).toBe(1);
  expect(error?.stderr).toMatch(/^invalid configuration: routes\/chat-completions\.yaml:\d+: \/stream\/when: must match pattern/);
});
