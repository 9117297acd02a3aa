/**
 * The simulator's Anthropic skills (docs/vendors/anthropic-files.md): `GET /v1/skills` through the SDK,
 * and `POST /v1/messages` with `container.skills`: the answer's blocks, container and usage, and the
 * generated files, downloaded through the Files API, are valid packages (zip entries read with yauzl;
 * pptx labelled application/zip; a PDF whose xref offsets point at its objects). Errors: unknown skill,
 * missing skills beta, no code execution tool.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { FILES_BETA } from '../../src/sim/anthropic-files.js';
import { SKILLS_BETA } from '../../src/sim/anthropic-skills.js';
import { countMessagesInputTokens } from '../../src/sim/messages.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { simCall } from './helpers.js';

let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ baseURL: sim.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const CODE_EXECUTION = { type: 'code_execution_20250825' as const, name: 'code_execution' as const };
const KINDS = ['xlsx', 'pptx', 'pdf', 'docx'] as const;
const params = (skills: string[], extra: Record<string, unknown> = {}) => ({
  model: 'claude-x', max_tokens: 1000, betas: ['code-execution-2025-08-25', SKILLS_BETA],
  messages: [{ role: 'user' as const, content: 'Quarterly numbers, please' }],
  container: { skills: skills.map((skill_id) => ({ type: 'anthropic' as const, skill_id, version: 'latest' })) },
  tools: [CODE_EXECUTION], ...extra,
});

/** Every entry of a ZIP archive, name to text. */
function zipEntries(buf: Buffer): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out = new Map<string, string>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const parts: Buffer[] = [];
          stream.on('data', (p: Buffer) => parts.push(p));
          stream.on('end', () => { out.set(entry.fileName, Buffer.concat(parts).toString('utf8')); zip.readEntry(); });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** The file ids of the bash results, in order. */
const fileIds = (m: BetaMessage): string[] => m.content.flatMap((b) => (b.type === 'bash_code_execution_tool_result' && b.content.type === 'bash_code_execution_result'
  ? b.content.content.map((o) => o.file_id) : []));

describe('GET /v1/skills', () => {
  it('lists the four built-in skills, filtered by source', async () => {
    const page = await client.beta.skills.list({ betas: [SKILLS_BETA], source: 'anthropic' });
    expect(page.data.map((s) => s.id)).toEqual([...KINDS]);
    for (const skill of page.data) {
      expect(Object.keys(skill).sort()).toEqual(['created_at', 'display_title', 'id', 'latest_version', 'source', 'type', 'updated_at']);
      expect(skill).toMatchObject({ type: 'skill', source: 'anthropic', latest_version: '20251013' });
    }
    expect((await client.beta.skills.list({ betas: [SKILLS_BETA], source: 'custom' })).data).toEqual([]);
    const raw = await simCall(sim.url, '/v1/skills?limit=3', 'GET', undefined, { 'anthropic-version': '2023-06-01', 'anthropic-beta': SKILLS_BETA });
    expect(raw.json).toMatchObject({ has_more: true, next_page: expect.any(String) });
    const rest = await simCall(sim.url, `/v1/skills?limit=3&page=${raw.json.next_page}`, 'GET', undefined, { 'anthropic-version': '2023-06-01', 'anthropic-beta': SKILLS_BETA });
    expect(rest.json).toMatchObject({ data: [{ id: 'docx' }], has_more: false, next_page: null });
  });

  it('refuses a request without the skills beta', async () => {
    const err = await client.beta.skills.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err).toMatchObject({ error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(SKILLS_BETA) } } });
  });
});

describe('POST /v1/messages with container skills', () => {
  it('answers code execution blocks, the container and usage; the files download as valid packages', async () => {
    const req = params([...KINDS]);
    const message = await client.beta.messages.create(req);
    expect(message.container).toEqual({ id: expect.stringMatching(/^container_/), expires_at: expect.any(String), skills: KINDS.map((skill_id) => ({ type: 'anthropic', skill_id, version: 'latest' })) });
    expect(Date.parse(message.container!.expires_at)).toBeGreaterThan(Date.now());
    expect(message.content.map((b) => b.type)).toEqual([
      ...KINDS.flatMap(() => ['server_tool_use', 'text_editor_code_execution_tool_result', 'server_tool_use', 'bash_code_execution_tool_result']), 'text',
    ]);
    expect(message.content.filter((b) => b.type === 'server_tool_use').map((b) => b.name)).toEqual(KINDS.flatMap(() => ['text_editor_code_execution', 'bash_code_execution']));
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: countMessagesInputTokens(req), server_tool_use: null });
    expect(message.usage.output_tokens).toBeGreaterThan(0);

    const ids = fileIds(message);
    expect(ids).toHaveLength(4);
    const files = await Promise.all(ids.map(async (id) => {
      const meta = await client.beta.files.retrieveMetadata(id, { betas: [FILES_BETA] });
      const res = await client.beta.files.download(id, { betas: [FILES_BETA] });
      return { meta, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
    }));
    const [xlsx, pptx, pdf, docx] = files as [typeof files[0], typeof files[0], typeof files[0], typeof files[0]];
    for (const f of files) {
      expect(f.meta.downloadable).toBe(true);
      expect(f.type).toBe(f.meta.mime_type);
      expect(f.bytes.length).toBe(f.meta.size_bytes);
    }
    expect(pptx.meta).toMatchObject({ filename: 'presentation.pptx', mime_type: 'application/zip' });
    expect(xlsx.meta.mime_type).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(docx.meta.mime_type).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(pdf.meta.mime_type).toBe('application/pdf');

    const main: Record<string, [string, string]> = {
      xlsx: ['xl/workbook.xml', 'spreadsheetml.sheet.main+xml'], pptx: ['ppt/presentation.xml', 'presentationml.presentation.main+xml'],
      docx: ['word/document.xml', 'wordprocessingml.document.main+xml'],
    };
    for (const [kind, f] of [['xlsx', xlsx], ['pptx', pptx], ['docx', docx]] as const) {
      expect(f.bytes.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');
      const entries = await zipEntries(f.bytes);
      const [part, type] = main[kind]!;
      expect(entries.get('[Content_Types].xml')).toContain(type);
      expect(entries.get('_rels/.rels')).toContain(part);
      expect(entries.has(part)).toBe(true);
    }
    const pptxEntries = await zipEntries(pptx.bytes);
    expect(pptxEntries.get('ppt/slides/slide1.xml')).toContain('Quarterly numbers, please');
    expect([...pptxEntries.keys()]).toEqual(expect.arrayContaining(['ppt/slideMasters/slideMaster1.xml', 'ppt/slideLayouts/slideLayout1.xml', 'ppt/theme/theme1.xml']));

    const text = pdf.bytes.toString('latin1');
    expect(text.startsWith('%PDF-1.4')).toBe(true);
    expect(text.trimEnd().endsWith('%%EOF')).toBe(true);
    const xref = Number(/startxref\n(\d+)/.exec(text)![1]);
    expect(text.slice(xref, xref + 4)).toBe('xref');
    const offsets = [...text.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    offsets.forEach((o, i) => expect(text.slice(o, o + 7)).toBe(`${i + 1} 0 obj`));
  });

  it('counts web fetches and honours omit_usage scoped by model', async () => {
    const req = params(['docx'], {
      messages: [{ role: 'user' as const, content: 'Summarise https://example.com/a into a document' }],
      tools: [CODE_EXECUTION, { type: 'web_fetch_20250910' as const, name: 'web_fetch' as const }],
    });
    const message = await client.beta.messages.create(req);
    expect(message.content.slice(0, 2).map((b) => b.type)).toEqual(['server_tool_use', 'web_fetch_tool_result']);
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 1 });
    await simCall(sim.url, '/__sim/faults', 'POST', { model: 'claude-x', fault: { omit_usage: true, times: 1 } satisfies SimFault });
    const raw = await simCall(sim.url, '/v1/messages', 'POST', { ...req, betas: undefined }, { 'anthropic-version': '2023-06-01', 'anthropic-beta': SKILLS_BETA });
    expect(raw.status).toBe(200);
    expect(raw.json.usage).toBeUndefined();
  });

  it('answers 400 for an unknown skill, a missing skills beta, or no code execution tool', async () => {
    const unknown = await client.beta.messages.create(params(['xlsx', 'spreadsheet-pro'])).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.BadRequestError);
    expect(unknown).toMatchObject({ error: { error: { type: 'invalid_request_error', message: expect.stringContaining("skill 'spreadsheet-pro'") } } });
    const noBeta = await client.beta.messages.create({ ...params(['xlsx']), betas: [] }).catch((e: unknown) => e);
    expect(noBeta).toMatchObject({ status: 400, error: { error: { message: 'container: Input should be a valid string' } } });
    const noTool = await client.beta.messages.create({ ...params(['pdf']), tools: [] }).catch((e: unknown) => e);
    expect(noTool).toMatchObject({ status: 400, error: { error: { message: expect.stringContaining('code_execution_20250825') } } });
    const badVersion = await client.beta.messages.create({ ...params([]), container: { skills: [{ type: 'anthropic', skill_id: 'pdf', version: '19990101' }] } }).catch((e: unknown) => e);
    expect(badVersion).toMatchObject({ status: 400 });
  });
});
