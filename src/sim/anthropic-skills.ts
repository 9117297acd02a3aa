/**
 * Anthropic Agent Skills in the simulator (docs/vendors/anthropic-files.md; spec
 * `shared/specs/anthropic/openapi.prism.json`): `GET /v1/skills` lists the four built-in skills
 * (`xlsx`, `pptx`, `pdf`, `docx`, source `anthropic`) as `BetaListSkillsResponse`, and a
 * `POST /v1/messages` whose `container` names skills (`BetaContainerParams`, beta `skills-2025-10-02`,
 * a code execution tool in `tools`) is answered as a `BetaMessage`: per skill a text-editor step and a
 * bash step whose result carries one generated file (`bash_code_execution_output {file_id}`) registered,
 * downloadable, in the simulated Files store; then a text block, the `container` and the usage. The
 * pptx output is labelled `application/zip`, as Anthropic does. Skills list faults scope by `anthropic-skills`.
 */
import { countTextTokens } from '../tokenize.js';
import { betas, checkAnthropicHeaders, sendAnthropicError, type SimFileStore } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange } from './exchange.js';
import { countMessagesInputTokens, type SimMessagesRequest } from './messages.js';
import { anthropicFaultResponse } from './messages-route.js';
import { sendJsonAnswer } from './native.js';
import { OFFICE_SAMPLES, type OfficeKind } from './office-samples.js';
import { bodyHash, isRecord, partsText, type Rec } from './text.js';

/** The beta value that enables skills (list and `container.skills`). */
export const SKILLS_BETA = 'skills-2025-10-02';
/** The name skills-list faults scope by. */
export const SKILLS_FAULT_KEY = 'anthropic-skills';
/** The (date-based) version of every built-in skill. */
export const ANTHROPIC_SKILL_VERSION = '20251013';
/** Code execution tools that can run skills (bash and text-editor sub-tools). */
export const SKILL_TOOL_TYPES = ['code_execution_20250825', 'code_execution_20260120'] as const;
/** How long a simulated container lives (a simulator choice). */
export const CONTAINER_TTL_MS = 30 * 24 * 3600 * 1000;

const OFFICE = 'application/vnd.openxmlformats-officedocument';
const SKILL_TIME = '2025-10-13T00:00:00Z';
const DIRECT = { type: 'direct' };
const MAX_SKILLS = 8;

/** A built-in skill and the file it generates. */
export interface BuiltinSkill { id: OfficeKind; display_title: string; filename: string; mime_type: string }

/** The built-in skills; pptx output is labelled application/zip (the vendor quirk the gateway verifies). */
export const ANTHROPIC_SKILLS: readonly BuiltinSkill[] = [
  { id: 'xlsx', display_title: 'Excel', filename: 'report.xlsx', mime_type: `${OFFICE}.spreadsheetml.sheet` },
  { id: 'pptx', display_title: 'PowerPoint', filename: 'presentation.pptx', mime_type: 'application/zip' },
  { id: 'pdf', display_title: 'PDF', filename: 'document.pdf', mime_type: 'application/pdf' },
  { id: 'docx', display_title: 'Word', filename: 'document.docx', mime_type: `${OFFICE}.wordprocessingml.document` },
];

/** The `Skill` object of a built-in skill. */
export const skillObject = (s: BuiltinSkill): Rec => ({
  id: s.id, type: 'skill', display_title: s.display_title, source: 'anthropic', latest_version: ANTHROPIC_SKILL_VERSION, created_at: SKILL_TIME, updated_at: SKILL_TIME,
});

/** `GET /v1/skills`: `source` filter, `limit` 1..100 (default 20), `page` token from `next_page`. */
function listSkills(x: Exchange, query: URLSearchParams): Promise<void> | void {
  const fail = (message: string) => sendAnthropicError(x, 400, 'invalid_request_error', message);
  const source = query.get('source');
  if (source !== null && source !== 'anthropic' && source !== 'custom') return fail("source: Input should be 'custom' or 'anthropic'");
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return fail('limit: Input should be an integer from 1 to 100');
  const page = query.get('page');
  const start = page === null || page === '' ? 0 : Number(Buffer.from(page.replace(/^page_/, ''), 'base64url').toString('utf8'));
  if (!Number.isInteger(start) || start < 0) return fail('page: invalid page token');
  const all = source === 'custom' ? [] : ANTHROPIC_SKILLS; // the simulator holds no custom skills
  const data = all.slice(start, start + limit).map(skillObject);
  const more = start + limit < all.length;
  return sendJsonAnswer(x, { data, has_more: more, next_page: more ? `page_${Buffer.from(String(start + limit)).toString('base64url')}` : null });
}

type Resolved = { skill: BuiltinSkill; echo: Rec };

/** The skills of a `BetaContainerParams`, or an error message in the API's `loc: message` style. */
function resolveSkills(container: Rec): Resolved[] | string {
  const extra = Object.keys(container).find((k) => k !== 'id' && k !== 'skills');
  if (extra !== undefined) return `container.${extra}: Extra inputs are not permitted`;
  if (container.id !== undefined && container.id !== null && typeof container.id !== 'string') return 'container.id: Input should be a valid string';
  const list = container.skills ?? [];
  if (!Array.isArray(list)) return 'container.skills: Input should be a valid list';
  if (list.length > MAX_SKILLS) return `container.skills: List should have at most ${MAX_SKILLS} items after validation, not ${list.length}`;
  const out: Resolved[] = [];
  for (const [i, s] of list.entries()) {
    const at = `container.skills.${i}`;
    if (!isRecord(s)) return `${at}: Input should be a valid dictionary`;
    const bad = Object.keys(s).find((k) => k !== 'type' && k !== 'skill_id' && k !== 'version');
    if (bad !== undefined) return `${at}.${bad}: Extra inputs are not permitted`;
    if (s.type !== 'anthropic' && s.type !== 'custom') return `${at}.type: Input should be 'anthropic' or 'custom'`;
    if (typeof s.skill_id !== 'string' || s.skill_id.length < 1 || s.skill_id.length > 64) return `${at}.skill_id: String should have 1 to 64 characters`;
    if (s.version !== undefined && (typeof s.version !== 'string' || s.version.length < 1 || s.version.length > 64)) return `${at}.version: String should have 1 to 64 characters`;
    const skill = s.type === 'anthropic' ? ANTHROPIC_SKILLS.find((b) => b.id === s.skill_id) : undefined;
    if (!skill) return `${at}: skill '${s.skill_id}' of type '${s.type}' was not found`;
    const version = typeof s.version === 'string' ? s.version : 'latest';
    if (version !== 'latest' && version !== ANTHROPIC_SKILL_VERSION) return `${at}.version: version '${version}' of skill '${skill.id}' was not found`;
    if (out.some((r) => r.skill.id === skill.id)) return `${at}: skill '${skill.id}' is listed twice`;
    out.push({ skill, echo: { type: s.type, skill_id: skill.id, version } });
  }
  return out;
}

/** Text of the last user message (text blocks only). */
function userText(messages: Rec[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return partsText(messages[i]!.content, ['text']);
  return '';
}

/** The web fetch steps: one per URL in the user text when a web_fetch tool is offered (capped by its `max_uses`). */
function webFetches(req: SimMessagesRequest, text: string, hash: string): Rec[] {
  const tool = (req.tools ?? []).find((t) => isRecord(t) && typeof t.type === 'string' && /^web_fetch_\d{8}$/.test(t.type));
  if (!isRecord(tool)) return [];
  const cap = typeof tool.max_uses === 'number' ? tool.max_uses : Infinity;
  const urls = (text.match(/https?:\/\/[^\s"'<>)]+/g) ?? []).slice(0, cap);
  return urls.flatMap((url, i) => {
    const id = `srvtoolu_sim${hash.slice(0, 16)}_fetch_${i}`;
    const document = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: `Simulated content of ${url}` }, title: `Simulated page ${i + 1}`, citations: null };
    return [
      { type: 'server_tool_use', id, name: 'web_fetch', input: { url }, caller: DIRECT },
      { type: 'web_fetch_tool_result', tool_use_id: id, content: { type: 'web_fetch_result', url, retrieved_at: new Date().toISOString(), content: document }, caller: DIRECT },
    ];
  });
}

/** The two code-execution steps of one skill, after storing its output file. */
function skillSteps(skill: BuiltinSkill, text: string, id: string, fileId: string): Rec[] {
  const script = `/tmp/outputs/build_${skill.id}.py`;
  const edit = `${id}_edit`;
  const run = `${id}_run`;
  return [
    { type: 'server_tool_use', id: edit, name: 'text_editor_code_execution', input: { command: 'create', path: script, file_text: `# /skills/${skill.id}: ${text}\n` }, caller: DIRECT },
    { type: 'text_editor_code_execution_tool_result', tool_use_id: edit, content: { type: 'text_editor_code_execution_create_result', is_file_update: false } },
    { type: 'server_tool_use', id: run, name: 'bash_code_execution', input: { command: `python ${script}` }, caller: DIRECT },
    {
      type: 'bash_code_execution_tool_result', tool_use_id: run,
      content: { type: 'bash_code_execution_result', stdout: `Saved /tmp/outputs/${skill.filename}\n`, stderr: '', return_code: 0, content: [{ type: 'bash_code_execution_output', file_id: fileId }] },
    },
  ];
}

/** Answers a Messages request whose `container` is an object (after the common Messages checks). */
async function answerContainer(store: SimFileStore, x: Exchange, req: SimMessagesRequest, fail: (message: string) => void): Promise<void> {
  if (!betas(x.headers).includes(SKILLS_BETA)) return fail('container: Input should be a valid string');
  const container = (x.body as Rec).container as Rec;
  const skills = resolveSkills(container);
  if (typeof skills === 'string') return fail(skills);
  const hasTool = (req.tools ?? []).some((t) => isRecord(t) && (SKILL_TOOL_TYPES as readonly unknown[]).includes(t.type));
  if (skills.length > 0 && !hasTool) return fail(`container.skills: skills require a code execution tool (${SKILL_TOOL_TYPES.join(' or ')}) in tools`);
  if (req.stream === true) return fail('stream: the simulator answers container skills only without streaming');
  const hash = bodyHash(x.raw);
  const text = userText(req.messages);
  const sample = Array.from(text.trim()).slice(0, 80).join('') || 'Simulated document';
  const content = webFetches(req, text, hash);
  const fetches = content.length / 2;
  for (const [i, { skill }] of skills.entries()) {
    const file = store.add({ filename: skill.filename, mimeType: skill.mime_type, data: OFFICE_SAMPLES[skill.id](sample), downloadable: true });
    if (!file) return sendAnthropicError(x, 500, 'api_error', 'The simulated Files store cannot hold the output.');
    content.push(...skillSteps(skill, sample, `srvtoolu_sim${hash.slice(0, 16)}_${i}`, file.id));
  }
  const names = skills.map((s) => s.skill.filename);
  const reply = names.length > 0 ? `Created ${names.join(', ')} from: ${sample}` : `This is a simulated reply to: ${sample}`;
  content.push({ type: 'text', text: reply }); // no `citations`: the API omits it on uncited text
  const outputTokens = countTextTokens(reply) + content.reduce((n, b) => n + (b.type === 'server_tool_use' ? countTextTokens(JSON.stringify(b.input)) : 0), 0);
  const now = Date.now();
  const body: Rec = {
    id: `msg_sim${hash.slice(0, 24)}`, type: 'message', role: 'assistant', model: req.model, content,
    stop_reason: 'end_turn', stop_sequence: null, stop_details: null, context_management: null,
    container: {
      id: typeof container.id === 'string' ? container.id : `container_011Sim${hash.slice(24, 48)}`,
      expires_at: new Date(now + CONTAINER_TTL_MS).toISOString(), skills: skills.map((s) => s.echo),
    },
  };
  if (x.fault.omit_usage !== true) {
    body.usage = {
      input_tokens: countMessagesInputTokens(req), cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: outputTokens,
      server_tool_use: fetches > 0 ? { web_search_requests: 0, web_fetch_requests: fetches } : null,
      service_tier: 'standard', inference_geo: null, iterations: null, speed: null,
    };
  }
  await sendJsonAnswer(x, body, { 'request-id': `req_sim${hash.slice(0, 24)}` });
}

/** The skills list route (matched by method and URL) and the container answer for `POST /v1/messages`, over `store`. */
export function createSkillsRoutes(store: SimFileStore): {
  match(method: string, url: URL): SimMatch | undefined;
  container(x: Exchange, req: SimMessagesRequest, fail: (message: string) => void): Promise<void>;
} {
  return {
    match(method, url) {
      if (method !== 'GET' || url.pathname !== '/v1/skills') return undefined;
      return {
        faultKey: SKILLS_FAULT_KEY,
        route: {
          faultResponse: anthropicFaultResponse,
          async handle(x) { if (checkAnthropicHeaders(x, SKILLS_BETA)) await listSkills(x, url.searchParams); },
        },
      };
    },
    container: (x, req, fail) => answerContainer(store, x, req, fail),
  };
}
