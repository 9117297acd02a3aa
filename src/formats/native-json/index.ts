/**
 * The native endpoints' client format (embeddings, rerank, translation, language, moderation, ...):
 * JSON in and out, errors in the completions-style shape `{error:{message,type,code,param}}` with the
 * spec's codes (spec 7), no streaming, and no token sizing (their meters are quantities, not tokens).
 */
import { openaiChatFormat } from '../openai-chat/index.js';
import type { ClientFormat } from '../types.js';

/** The native-json client format. */
export const nativeJsonFormat: ClientFormat = {
  id: 'native-json',
  errorBody: openaiChatFormat.errorBody,
  streamErrorFrame: openaiChatFormat.streamErrorFrame,
  streamDoneFrame: null,
  betaHeader: null,
  tokens: null,
  // Native answers say their charge in X-Gateway-Cost-USD only (their own `usage` counts units, spec 4).
  usageCost: null,
};
