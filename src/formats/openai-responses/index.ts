/**
 * The responses client format (spec 4.2): errors in the `{error:{message,type,code,param}}` shape
 * shared with chat; streams are named events (`event: response.created` ...) with no `[DONE]`.
 */
import type { GatewayError } from '../../errors.js';
import { countResponsesPromptTokens } from '../../tokenize.js';
import { formatSse } from '../../translate/sse.js';
import { openaiChatFormat } from '../openai-chat/index.js';
import type { ClientFormat } from '../types.js';
import { namedEventFrame } from '../usage-cost.js';

/** Calls a built-in web search may make when the client sets no `max_tool_calls`. */
export const DEFAULT_TOOL_CALL_CAP = 5;

const WEB_SEARCH_TYPES = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

/** The Responses API's stream error event, numbered after the last event the client received. */
export function responsesErrorFrame(error: GatewayError, sequenceNumber: number): string {
  return formatSse(JSON.stringify({ type: 'error', code: error.code, message: error.message, param: error.extra.param ?? null, sequence_number: sequenceNumber }), 'error');
}

/** The responses client format. */
export const openaiResponsesFormat: ClientFormat = {
  id: 'openai-responses',
  errorBody: openaiChatFormat.errorBody,
  // Before any event was sent the error is the first one; streams number it themselves (errorFrame).
  streamErrorFrame: (error: GatewayError) => responsesErrorFrame(error, 0),
  streamDoneFrame: null,
  betaHeader: null,
  // The response's `usage`; streamed, the terminal event's `response.usage` (an incomplete response is billed too).
  usageCost: { answer: ['usage'], frame: namedEventFrame(new Set(['response.completed', 'response.incomplete']), ['response', 'usage']) },
  tokens: {
    estimateInputTokens: countResponsesPromptTokens,
    inputParam: 'input',
    requestedMaxOutput: (body) => (typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null),
    maxOutputParam: () => 'max_output_tokens',
    billableTools: (body): Record<string, number> => {
      const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: string }>) : [];
      if (!tools.some((t) => WEB_SEARCH_TYPES.has(t.type ?? ''))) return {};
      return { web_search: typeof body.max_tool_calls === 'number' ? body.max_tool_calls : DEFAULT_TOOL_CALL_CAP };
    },
  },
};
