/**
 * The simulator's Anthropic Files API (docs/vendors/anthropic-files.md) through the official SDK
 * (`client.beta.files`) and raw HTTP: upload, list with cursors, metadata, delete (twice: 404),
 * download of a generated file (bytes and content type) and refusal for an uploaded one, the required
 * headers, faults scoped by `anthropic-files`, and the bounded store.
 */
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FILES_BETA, SimFileStore } from '../../src/sim/anthropic-files.js';
import { SKILLS_BETA } from '../../src/sim/anthropic-skills.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { simCall } from './helpers.js';

let sim: Simulator;
let client: Anthropic;
const betas = [FILES_BETA];
const VERSION = { 'anthropic-version': '2023-06-01' };

beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ baseURL: sim.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const addFault = (fault: SimFault, model?: string) => simCall(sim.url, '/__sim/faults', 'POST', { model, fault });
const upload = async (name: string, text: string, type = 'text/plain') =>
  client.beta.files.upload({ file: await toFile(Buffer.from(text), name, { type }), betas });

/** Generates one xlsx through a skills message and returns its file id. */
async function generatedFileId(): Promise<string> {
  const res = await simCall(sim.url, '/v1/messages', 'POST', {
    model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'a budget sheet' }],
    container: { skills: [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] },
    tools: [{ type: 'code_execution_20250825', name: 'code_execution' }],
  }, { ...VERSION, 'anthropic-beta': SKILLS_BETA });
  expect(res.status, res.text).toBe(200);
  const block = (res.json.content as Array<{ type: string; content?: { content?: Array<{ file_id: string }> } }>).find((b) => b.type === 'bash_code_execution_tool_result');
  return block!.content!.content![0]!.file_id;
}

describe('Anthropic Files API: the SDK against the simulator', () => {
  it('uploads, retrieves, lists and deletes (the second delete is a 404)', async () => {
    const file = await upload('notes.txt', 'hello files');
    expect(file).toEqual({
      id: expect.stringMatching(/^file_/), type: 'file', filename: 'notes.txt', mime_type: 'text/plain',
      size_bytes: 11, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/), downloadable: false,
    });
    expect(await client.beta.files.retrieveMetadata(file.id, { betas })).toEqual(file);
    const page = await client.beta.files.list({ betas });
    expect(page.data).toEqual([file]);
    expect(await client.beta.files.delete(file.id, { betas })).toEqual({ id: file.id, type: 'file_deleted' });
    const again = await client.beta.files.delete(file.id, { betas }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Anthropic.NotFoundError);
    expect(again).toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error' } } });
    await expect(client.beta.files.retrieveMetadata(file.id, { betas })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('downloads a file the simulator generated, with its bytes and content type', async () => {
    const id = await generatedFileId();
    const meta = await client.beta.files.retrieveMetadata(id, { betas });
    expect(meta).toMatchObject({ downloadable: true, filename: 'report.xlsx', mime_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    const res = await client.beta.files.download(id, { betas });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.headers.get('content-type')).toBe(meta.mime_type);
    expect(bytes.length).toBe(meta.size_bytes);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');
  });

  it('refuses to download an uploaded file (400, file_not_downloadable)', async () => {
    const file = await upload('data.csv', 'a,b\n1,2\n', 'text/csv');
    const err = await client.beta.files.download(file.id, { betas }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err).toMatchObject({ status: 400, errorCode: 'file_not_downloadable', error: { error: { type: 'invalid_request_error', message: 'file is not downloadable' } } });
  });
});

describe('Anthropic Files API: wire details', () => {
  it('pages newest first with limit, after_id and before_id', async () => {
    const ids: string[] = [];
    for (const name of ['a.txt', 'b.txt', 'c.txt']) ids.push((await upload(name, name)).id);
    const [a, b, c] = ids as [string, string, string];
    const headers = { ...VERSION, 'anthropic-beta': FILES_BETA };
    const first = await simCall(sim.url, '/v1/files?limit=2', 'GET', undefined, headers);
    expect(first.status).toBe(200);
    expect(Object.keys(first.json).sort()).toEqual(['data', 'first_id', 'has_more', 'last_id']);
    expect(first.json).toMatchObject({ first_id: c, last_id: b, has_more: true });
    const next = await simCall(sim.url, `/v1/files?limit=2&after_id=${b}`, 'GET', undefined, headers);
    expect(next.json).toMatchObject({ data: [{ id: a }], first_id: a, last_id: a, has_more: false });
    const back = await simCall(sim.url, `/v1/files?limit=1&before_id=${a}`, 'GET', undefined, headers);
    expect(back.json).toMatchObject({ data: [{ id: b }], has_more: true });
    const bad = await simCall(sim.url, '/v1/files?limit=1001', 'GET', undefined, headers);
    expect(bad.status).toBe(400);
    expect(bad.json.error.type).toBe('invalid_request_error');
  });

  it('requires anthropic-version and the files beta, in the Anthropic error shape', async () => {
    const noBeta = await simCall(sim.url, '/v1/files', 'GET', undefined, VERSION);
    expect(noBeta.status).toBe(400);
    expect(noBeta.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(FILES_BETA) } });
    expect(noBeta.json.request_id).toMatch(/^req_/);
    const noVersion = await simCall(sim.url, '/v1/files', 'GET', undefined, { 'anthropic-beta': FILES_BETA });
    expect(noVersion.json.error.message).toBe('anthropic-version: header is required');
    const listed = await simCall(sim.url, '/v1/files', 'GET', undefined, { ...VERSION, 'anthropic-beta': `${SKILLS_BETA}, ${FILES_BETA}` });
    expect(listed.status).toBe(200);
  });

  it('rejects an upload without a file part', async () => {
    const form = new FormData();
    form.append('purpose', 'assistants');
    const res = await fetch(`${sim.url}/v1/files`, { method: 'POST', headers: { ...VERSION, 'anthropic-beta': FILES_BETA }, body: form });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'file: Field required' } });
  });

  it('applies faults scoped by anthropic-files', async () => {
    await addFault({ status: 529, times: 1 }, 'anthropic-files');
    await addFault({ status: 500 }, 'some-other-model');
    const err = await client.beta.files.list({ betas }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });
    await simCall(sim.url, '/__sim/faults', 'DELETE');
    const id = await generatedFileId();
    await addFault({ truncate_after_chunks: 2, times: 1 }, 'anthropic-files');
    const res = await request(`${sim.url}/v1/files/${id}/content`, { headers: { ...VERSION, 'anthropic-beta': FILES_BETA } });
    expect(res.statusCode).toBe(200);
    await expect(res.body.arrayBuffer()).rejects.toThrow();
    const whole = await client.beta.files.download(id, { betas });
    expect(Buffer.from(await whole.arrayBuffer()).subarray(0, 2).toString('latin1')).toBe('PK');
  });
});

describe('SimFileStore', () => {
  it('evicts the oldest files past its byte bound and refuses a file larger than the bound', () => {
    const store = new SimFileStore(10);
    const add = (n: number) => store.add({ filename: `${n}.bin`, mimeType: 'application/octet-stream', data: Buffer.alloc(n), downloadable: false });
    const a = add(4)!;
    const b = add(4)!;
    const c = add(4)!;
    expect(store.get(a.id)).toBeUndefined();
    expect(store.list().map((f) => f.id)).toEqual([c.id, b.id]);
    expect(store.usedBytes).toBe(8);
    expect(add(11)).toBeUndefined();
    expect(store.delete(b.id)).toBe(true);
    expect(store.delete(b.id)).toBe(false);
    expect(store.usedBytes).toBe(4);
  });
});
