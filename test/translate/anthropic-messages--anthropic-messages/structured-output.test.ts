/**
 * Structured output on the messages passthrough (issue 31 item 1): `output_config.format` (and the
 * deprecated beta `output_format`) is forwarded as sent to an offering with `structured_output: true`
 * (the golden case json-output-config), and refused with a 400 before anything is sent otherwise.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { createAnthropicMessagesToAnthropicMessages } from '../../../src/translate/anthropic-messages--anthropic-messages/index.js';

const capable = { id: 'claude-haiku-4-5', upstreamModel: 'claude-haiku-4-5-20251001', structuredOutput: true } as CompiledOffering;
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const base = { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };

function refusal(body: Record<string, unknown>, offering: CompiledOffering | undefined = capable): GatewayError {
  try { createAnthropicMessagesToAnthropicMessages(body, { params: {}, offering }); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

describe('messages passthrough structured output', () => {
  it('forwards output_config.format (with effort beside it) unchanged to a capable offering', () => {
    const body = { ...base, output_config: { effort: 'low', format: { type: 'json_schema', schema } } };
    expect(createAnthropicMessagesToAnthropicMessages(body, { params: {}, offering: capable }).request(body, capable)).toEqual({ ...body, model: 'claude-haiku-4-5-20251001' });
  });

  it('refuses it on an offering without structured_output, and a schema the vendor would refuse, naming the parameter', () => {
    const plain = refusal({ ...base, output_config: { format: { type: 'json_schema', schema } } }, { ...capable, structuredOutput: false });
    expect([plain.code, plain.status, plain.extra.param]).toEqual(['unsupported_parameter', 400, 'output_config.format']);
    const open = refusal({ ...base, output_format: { type: 'json_schema', schema: { type: 'object' } } });
    expect([open.extra.param, open.message]).toEqual(['output_format', expect.stringContaining('"additionalProperties": false')]);
    expect(refusal({ ...base, output_config: { format: { type: 'text' } } }).code).toBe('invalid_request');
  });

  it('lets output_config without a format (effort only) through whatever the offering', () => {
    const body = { ...base, output_config: { effort: 'low', format: null } };
    expect(() => createAnthropicMessagesToAnthropicMessages(body, { params: {}, offering: { ...capable, structuredOutput: false } })).not.toThrow();
  });
});
