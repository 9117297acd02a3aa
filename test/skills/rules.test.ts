/** The spec 4.6 requirements as pure checks: each rule refused on its own, naming the rule and the parameter. */
import { describe, expect, it } from 'vitest';
import { checkSkillsExecution, isSkillsRequest, operationIdOf, SKILL_LIMITS } from '../../src/skills/rules.js';
import { outputFileIds } from '../../src/skills/execution.js';

const ctx = {
  modelId: 'm', modelSkills: new Set(['xlsx', 'pptx']), source: 'anthropic',
  builtins: ['xlsx', 'pptx', 'pdf'].map((id) => ({ id, displayTitle: id, latestVersion: '20251013', createdAt: '2025-10-13T00:00:00Z' })),
  versionHeaders: ['anthropic-version', 'compat-version'], betaHeader: 'anthropic-beta',
};
const tools = () => [
  { type: SKILL_LIMITS.codeExecution.type, name: 'code_execution' },
  { type: SKILL_LIMITS.webFetch.type, name: 'web_fetch', max_uses: 3, max_content_tokens: 4096, allowed_domains: ['example.com'] },
];
const body = (extra: Record<string, unknown> = {}) => ({
  model: 'm', max_tokens: 1024, container: { skills: [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] }, tools: tools(), messages: [], ...extra,
});
const headers = { 'x-gateway-operation-id': 'op-1', 'anthropic-version': '2023-06-01' };

describe('skills rules (spec 4.6)', () => {
  it('accepts a request meeting every rule, with the version pinned or latest', () => {
    expect(checkSkillsExecution(body(), headers, ctx)).toEqual({ operationId: 'op-1', skills: ['xlsx'] });
    const pinned = body({ container: { skills: [{ type: 'anthropic', skill_id: 'pptx', version: '20251013' }, { type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] } });
    expect(checkSkillsExecution(pinned, { ...headers, 'compat-version': '2023-06-01', 'anthropic-version': undefined }, ctx).skills).toEqual(['pptx', 'xlsx']);
  });

  it('names the rule and the parameter of each refusal', () => {
    const refused = (b: Record<string, unknown>, h: Record<string, string | undefined> = headers) => {
      try { checkSkillsExecution(b, h, ctx); } catch (e) { const g = e as { code: string; message: string; extra: { param: string | null } }; return [g.code, g.message.match(/spec 4\.6, ([^)]+)\)/)?.[1] ?? null, g.extra.param ?? null]; }
      return null;
    };
    expect(refused(body(), { 'anthropic-version': '2023-06-01' })).toEqual(['operation_id_required', null, null]);
    expect(refused(body({ stream: true }))).toEqual(['invalid_request', 'stream', 'stream']);
    expect(refused(body({ max_tokens: 1025 }))).toEqual(['invalid_request', 'max_tokens', 'max_tokens']);
    expect(refused(body({ container: 'container_abc' }))).toEqual(['invalid_request', 'container', 'container']);
    expect(refused(body({ container: { id: 'c', skills: [] } }))).toEqual(['invalid_request', 'container', 'container.id']);
    expect(refused(body({ container: { skills: [{ type: 'anthropic', skill_id: 'pdf', version: 'latest' }] } }))).toEqual(['invalid_request', 'skills in request', 'container.skills.0.skill_id']);
    expect(refused(body({ container: { skills: [{ type: 'anthropic', skill_id: 'xlsx', version: '1999' }] } }))).toEqual(['invalid_request', 'container', 'container.skills.0.version']);
    expect(refused(body({ container: { skills: [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }, { type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] } }))).toEqual(['invalid_request', 'container', 'container.skills']);
    expect(refused(body({ tools: [tools()[0]] }))).toEqual(['invalid_request', 'tools', 'tools']);
    expect(refused(body({ tools: [tools()[0], { ...tools()[1], allowed_domains: undefined }] }))).toEqual(['invalid_request', 'tools', 'tools.allowed_domains']);
    expect(refused(body({ tools: [tools()[0], { ...tools()[1], max_uses: 0 }] }))).toEqual(['invalid_request', 'web_fetch limits', 'tools.max_uses']);
    expect(refused(body(), { ...headers, 'anthropic-beta': 'x' })).toEqual(['invalid_request', 'version header', null]);
    // The beta header is the client format's (src/formats): a format without one refuses none.
    expect(checkSkillsExecution(body(), { ...headers, 'anthropic-beta': 'x' }, { ...ctx, betaHeader: null }).operationId).toBe('op-1');
    expect(refused(body(), { ...headers, 'anthropic-version': '2026-10-21' })).toEqual(['invalid_request', 'version header', null]);
  });

  it('recognises skills and standalone code execution requests, and bounds the operation id', () => {
    expect(isSkillsRequest({ messages: [] })).toBe(false);
    expect(isSkillsRequest({ tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] })).toBe(true);
    expect(isSkillsRequest({ container: {} })).toBe(true);
    expect(() => operationIdOf({ 'x-gateway-operation-id': 'x'.repeat(201) })).toThrow(/X-Gateway-Operation-ID/);
    expect(() => operationIdOf({ 'x-gateway-operation-id': 'with space' })).toThrow(/X-Gateway-Operation-ID/);
    expect(operationIdOf({ 'x-gateway-operation-id': ' op-2 ' })).toBe('op-2');
  });

  it('finds every output file id once, at any depth', () => {
    const content = [
      { type: 'bash_code_execution_tool_result', content: { type: 'bash_code_execution_result', content: [{ type: 'bash_code_execution_output', file_id: 'file_a' }, { file_id: 'file_b' }] } },
      { type: 'text_editor_code_execution_tool_result', content: { file_id: 'file_a' } },
      { type: 'text', text: 'file_id: not an id' },
    ];
    expect(outputFileIds(content)).toEqual(['file_a', 'file_b']);
  });
});
