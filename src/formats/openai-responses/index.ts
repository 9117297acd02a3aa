/**
 * The responses client format (spec 4.2): errors in the `{error:{message,type,code,param}}` shape
 * shared with chat; streams are named events (`event: response.created` ...) with no `[DONE]`.
 */
import type { GatewayError } from '../../errors.js';
import { countResponsesPromptTokens } from '../../tokenize.js';
import { formatSse } from '../../translate/sse.js';
import { openaiChatFormat } from '../openai-chat/index.js';
import type { ClientFormat } from '../types.js';

/** Calls a built-in web search may make when the client sets no `max_tool_calls`. */
export const DEFAULT_TOOL_CALL_CAP = 5;

const WEB_SEARCH_TYPES = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

/** The responses client format. */
export const openaiResponsesFormat: ClientFormat = {
  id: 'openai-responses',
  errorBody: openaiChatFormat.errorBody,
  // The Responses API's own stream error event: `{type: "error", code, message, param}`.
  streamErrorFrame: (error: GatewayError) => formatSse(JSON.stringify({ type: 'error', code: error.code, message: error.message, param: error.extra.param ?? null, sequence_number: 0 }), 'error'),
  streamDoneFrame: null,
  estimateInputTokens: countResponsesPromptTokens,
  requestedMaxOutput: (body) => (typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null),
  billableTools: (body): Record<string, number> => {
    const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: string }>) : [];
    if (!tools.some((t) => WEB_SEARCH_TYPES.has(t.type ?? ''))) return {};
    return { web_search: typeof body.max_tool_calls === 'number' ? body.max_tool_calls : DEFAULT_TOOL_CALL_CAP };
  },
};
