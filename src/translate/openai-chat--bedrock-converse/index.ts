/**
 * openai-chat client to Bedrock's Converse API (issue 32 item 2): the chat request becomes a Messages
 * request (openai-chat--anthropic-messages, with its parameter refusals), which becomes a Converse
 * request (anthropic-messages--bedrock-converse); answers and ConverseStream events come back the same
 * way, event by event (src/translate/chain.ts). The two formats are close (roles, tool use blocks, cache
 * points), so one translator each way keeps the mapping in one place. Usage is Converse's own report,
 * read once by the inner translator: the bill is what Bedrock reported, cache reads and writes included.
 */
import { chainTranslators } from '../chain.js';
import { createAnthropicMessagesToBedrockConverse } from '../anthropic-messages--bedrock-converse/index.js';
import { createOpenaiChatToAnthropicMessages } from '../openai-chat--anthropic-messages/index.js';
import type { TranslatorFactory } from '../types.js';

/** Creates the openai-chat--bedrock-converse translator for one request. */
export const createOpenaiChatToBedrockConverse: TranslatorFactory = chainTranslators({
  outer: createOpenaiChatToAnthropicMessages,
  inner: createAnthropicMessagesToBedrockConverse,
  // The messages format has no terminator frame: its message_stop ends the outer half.
  middleDone: null,
});
