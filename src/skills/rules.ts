/**
 * The requirements of a skills execution (spec 4.6 table and rules 1-3), checked on the request
 * before anything is claimed or reserved. Each refusal is a 400 naming the rule it breaks.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { BuiltinSkill } from '../config/types.js';
import { GatewayError } from '../errors.js';

/** The operation-id header (spec 4.6, DESIGN.md "Idempotency"). */
export const OPERATION_HEADER = 'x-gateway-operation-id';

/** The tool versions and limits of the spec 4.6 table. */
export const SKILL_LIMITS = {
  maxTokens: 1024,
  codeExecution: { type: 'code_execution_20260120', name: 'code_execution' },
  webFetch: { type: 'web_fetch_20260209', name: 'web_fetch', maxUses: 3, maxContentTokens: 4096 },
  version: '2023-06-01',
} as const;

/** What the rules check against: the model's skills and the vendor's built-ins. */
export interface SkillContext {
  modelId: string;
  modelSkills: ReadonlySet<string>;
  source: string | null;
  builtins: readonly BuiltinSkill[];
  /** The route's version header and its aliases (routes/messages.yaml `require_headers`). */
  versionHeaders: readonly string[];
  /** The client format's beta header (src/formats), refused on an execution; null: the format has none. */
  betaHeader: string | null;
}

/** A checked execution: its operation id and the skills it loads. */
export interface SkillExecution { operationId: string; skills: string[] }

const refuse = (rule: string, message: string, param?: string): GatewayError =>
  new GatewayError('invalid_request', `Skills execution (spec 4.6, ${rule}): ${message}`, { param: param ?? null });

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when the request asks for a skills execution or for code execution (never served alone). */
export function isSkillsRequest(body: Json): boolean {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return body.container !== undefined || tools.some((t) => isObject(t) && typeof t.type === 'string' && t.type.startsWith('code_execution_'));
}

/** The shape of an operation id (skills, images and video): 1 to 200 visible ASCII characters. */
export const OPERATION_ID = /^[\x21-\x7e]{1,200}$/;

/** The operation id header, or 400 operation_id_required. */
export function operationIdOf(headers: IncomingHttpHeaders): string {
  const value = headers[OPERATION_HEADER];
  if (typeof value !== 'string' || !OPERATION_ID.test(value.trim())) {
    throw new GatewayError('operation_id_required', 'A skills execution needs the header X-Gateway-Operation-ID: a unique id (1 to 200 visible ASCII characters) for this execution.');
  }
  return value.trim();
}

/** Spec 9: beta headers are not used; the execution's version header is the documented one. */
function checkHeaders(headers: IncomingHttpHeaders, ctx: SkillContext): void {
  if (ctx.betaHeader !== null && headers[ctx.betaHeader] !== undefined) throw refuse('version header', 'send no beta headers; the gateway sets what the vendor needs.');
  const version = ctx.versionHeaders.map((name) => headers[name]).find((v) => v !== undefined);
  if (version !== SKILL_LIMITS.version) throw refuse('version header', `send the version header ${SKILL_LIMITS.version}.`);
}

function checkContainer(body: Json, ctx: SkillContext): string[] {
  const container = body.container;
  if (container === undefined) throw refuse('container', 'a fresh container with skills is required: {"skills": [{"type", "skill_id", "version"}]}. Standalone code execution is not supported.', 'container');
  if (!isObject(container)) throw refuse('container', 'container reuse is not supported: send a fresh container object with skills.', 'container');
  if (container.id !== undefined && container.id !== null) throw refuse('container', 'container reuse is not supported: send a fresh container without an id.', 'container.id');
  const unknownKey = Object.keys(container).find((k) => k !== 'skills' && k !== 'id');
  if (unknownKey) throw refuse('container', `unknown container field "${unknownKey}".`, `container.${unknownKey}`);
  const skills = container.skills;
  if (!Array.isArray(skills) || skills.length === 0) throw refuse('container', 'container.skills must list at least one built-in skill.', 'container.skills');
  return skills.map((skill, i) => checkSkill(skill, i, ctx));
}

function checkSkill(skill: unknown, i: number, ctx: SkillContext): string {
  const at = `container.skills.${i}`;
  if (!isObject(skill)) throw refuse('container', 'each skill is {"type", "skill_id", "version"}.', at);
  if (skill.type !== ctx.source) throw refuse('container', `custom skills are not supported: type must be "${ctx.source ?? 'a built-in source'}".`, `${at}.type`);
  const builtin = ctx.builtins.find((b) => b.id === skill.skill_id);
  if (!builtin) throw refuse('container', `unknown skill ${JSON.stringify(skill.skill_id)} (built-ins: ${ctx.builtins.map((b) => b.id).join(', ')}).`, `${at}.skill_id`);
  if (typeof skill.version !== 'string' || (skill.version !== 'latest' && skill.version !== builtin.latestVersion)) {
    throw refuse('container', `version must be "latest" or "${builtin.latestVersion}".`, `${at}.version`);
  }
  if (!ctx.modelSkills.has(builtin.id)) {
    throw refuse('skills in request', `the model "${ctx.modelId}" does not support the ${builtin.id} skill (it supports: ${[...ctx.modelSkills].join(', ') || 'none'}).`, `${at}.skill_id`);
  }
  return builtin.id;
}

function checkTools(body: Json): void {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
  const { codeExecution: code, webFetch: fetch } = SKILL_LIMITS;
  const other = tools.find((t) => t.type !== code.type && t.type !== fetch.type);
  if (other) throw refuse('tools', `only the code execution and web fetch tools are allowed; not ${JSON.stringify(other.type ?? other.name)} (client tools and paid web search are not supported).`, 'tools');
  const codeTool = tools.filter((t) => t.type === code.type);
  const fetchTool = tools.filter((t) => t.type === fetch.type);
  if (codeTool.length !== 1 || codeTool[0]!.name !== code.name) throw refuse('tools', `include exactly one {"type": "${code.type}", "name": "${code.name}"}.`, 'tools');
  if (fetchTool.length !== 1 || fetchTool[0]!.name !== fetch.name) throw refuse('tools', `include exactly one {"type": "${fetch.type}", "name": "${fetch.name}", "max_uses", "max_content_tokens", "allowed_domains"}.`, 'tools');
  const web = fetchTool[0]!;
  if (!Number.isInteger(web.max_uses) || (web.max_uses as number) < 1 || (web.max_uses as number) > fetch.maxUses) throw refuse('web_fetch limits', `max_uses must be 1 to ${fetch.maxUses}.`, 'tools.max_uses');
  if (!Number.isInteger(web.max_content_tokens) || (web.max_content_tokens as number) < 1 || (web.max_content_tokens as number) > fetch.maxContentTokens) {
    throw refuse('web_fetch limits', `max_content_tokens must be 1 to ${fetch.maxContentTokens}.`, 'tools.max_content_tokens');
  }
  if (!Array.isArray(web.allowed_domains) || !web.allowed_domains.every((d) => typeof d === 'string' && d.length > 0)) {
    throw refuse('tools', 'web_fetch needs explicit allowed_domains (a list of domains).', 'tools.allowed_domains');
  }
}

/** Checks every requirement of spec 4.6 on the request; returns the operation id and the skills loaded. */
export function checkSkillsExecution(body: Json, headers: IncomingHttpHeaders, ctx: SkillContext): SkillExecution {
  const operationId = operationIdOf(headers);
  checkHeaders(headers, ctx);
  if (body.stream === true) throw refuse('stream', 'streaming is not supported: send "stream": false.', 'stream');
  if (typeof body.max_tokens !== 'number' || body.max_tokens > SKILL_LIMITS.maxTokens) throw refuse('max_tokens', `max_tokens must be at most ${SKILL_LIMITS.maxTokens}.`, 'max_tokens');
  const skills = checkContainer(body, ctx);
  if (new Set(skills).size !== skills.length) throw refuse('container', 'a skill is listed twice.', 'container.skills');
  checkTools(body);
  return { operationId, skills };
}
