/**
 * File references in /v1/messages (issue 10 item 3, spec 4.4): a `document` block with
 * `source: {type: "file", file_id: "file_gw_..."}` reaches the vendor with the vendor's id and the
 * files beta flag; another account's id is 404 with nothing reserved; count_tokens refuses an owned
 * reference with file_token_count_unsupported. Through the official SDK.
 */
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched } from '../helpers/native.js';
import { parseUsd } from '../../src/money.js';

interface SimLast { path: string; headers: Record<string, string>; body: { messages: Array<{ content: Array<{ source?: { file_id?: string } }> }> } }

describe('messages with file references', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  const ask = (fileId: string) => ({
    model: 'claude-haiku-4-5', max_tokens: 64,
    messages: [{ role: 'user' as const, content: [
      { type: 'document' as const, source: { type: 'file' as const, file_id: fileId } },
      { type: 'text' as const, text: 'Summarise the document.' },
    ] }],
  });
  const lastUpstream = async (): Promise<SimLast> => (await (await fetch(`${t.sim.url}/__sim/last`)).json()) as SimLast;

  it('rewrites the gateway id to the vendor id, sends the files beta flag, and bills the tokens', async () => {
    const account = await t.account('5');
    const sdk = new Anthropic({ apiKey: account.key, baseURL: t.url, maxRetries: 0 });
    const file = await sdk.files.upload({ file: await toFile(Buffer.from('The quarterly report says revenue grew.'), 'report.txt', { type: 'text/plain' }) });
    const message = await sdk.messages.create(ask(file.id));
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    const sent = await lastUpstream();
    expect(sent.path).toBe('/v1/messages');
    const vendorId = sent.body.messages[0]!.content[0]!.source!.file_id!;
    expect(vendorId).toMatch(/^file_/);
    expect(vendorId).not.toBe(file.id);
    expect(JSON.stringify(sent.body)).not.toContain('file_gw_');
    expect(sent.headers['anthropic-beta']).toContain('files-api-2025-04-14');
    const [row] = (await t.usage(account.id)).data;
    expect(row?.kind).toBe('tokens');
  });

  it("answers 404 for another account's file and for an unknown id, before anything is reserved", async () => {
    const owner = await t.account('5');
    const other = await t.account('5');
    const file = await new Anthropic({ apiKey: owner.key, baseURL: t.url }).files.upload({ file: await toFile(Buffer.from('secret'), 's.txt', { type: 'text/plain' }) });
    const theirs = new Anthropic({ apiKey: other.key, baseURL: t.url, maxRetries: 0 });
    await expect(theirs.messages.create(ask(file.id))).rejects.toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error', code: 'file_not_found' } } });
    await expect(theirs.messages.create(ask('file_gw_000000000000000000000000'))).rejects.toMatchObject({ status: 404 });
    await expectUntouched(t, other, parseUsd('5'));
  });

  it('count_tokens refuses an owned file reference with file_token_count_unsupported', async () => {
    const account = await t.account('0');
    const sdk = new Anthropic({ apiKey: account.key, baseURL: t.url, maxRetries: 0 });
    const file = await sdk.files.upload({ file: await toFile(Buffer.from('text'), 't.txt', { type: 'text/plain' }) });
    await expect(sdk.messages.countTokens(ask(file.id))).rejects.toMatchObject({ status: 400, error: { error: { code: 'file_token_count_unsupported' } } });
    // Without a file reference it still counts.
    expect((await sdk.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] })).input_tokens).toBeGreaterThan(0);
  });
});
