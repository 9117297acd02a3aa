/** Translators by `<client format>--<upstream format>`; a new pair is one folder and one line here. */
import { GatewayError } from '../errors.js';
import { createAnthropicMessagesToAnthropicCountTokens } from './anthropic-messages--anthropic-count-tokens/index.js';
import { createAnthropicMessagesToAnthropicMessages } from './anthropic-messages--anthropic-messages/index.js';
import { createAnthropicMessagesToGeminiGenerateContent } from './anthropic-messages--gemini-generate-content/index.js';
import { createNativeJsonToBflFlux } from './native-json--bfl-flux/index.js';
import { createNativeJsonToAzureContentSafety } from './native-json--azure-content-safety/index.js';
import { createNativeJsonToAzureContentSafetyImage } from './native-json--azure-content-safety-image/index.js';
import { createNativeJsonToAzureImageAnalysis } from './native-json--azure-image-analysis/index.js';
import { createNativeJsonToAzureDiLayout } from './native-json--azure-di-layout/index.js';
import { createNativeJsonToAzureDiRead } from './native-json--azure-di-read/index.js';
import { createNativeJsonToAzureLanguageAnalyze } from './native-json--azure-language-analyze/index.js';
import { createNativeJsonToAzureLanguageSummarize } from './native-json--azure-language-summarize/index.js';
import { createNativeJsonToAzureTranslator } from './native-json--azure-translator/index.js';
import { createNativeJsonToAzureDocumentTranslation } from './native-json--azure-document-translation/index.js';
import { createNativeJsonToPiiRedaction } from './native-json--pii-redaction/index.js';
import { createCohereToCohereEmbed } from './cohere--cohere-embed/index.js';
import { createCohereToCohereRerank } from './cohere--cohere-rerank/index.js';
import { createNativeJsonToCohereEmbed } from './native-json--cohere-embed/index.js';
import { createNativeJsonToCohereRerank } from './native-json--cohere-rerank/index.js';
import { createNativeJsonToElevenlabsSoundGeneration } from './native-json--elevenlabs-sound-generation/index.js';
import { createNativeJsonToElevenlabsTts } from './native-json--elevenlabs-tts/index.js';
import { createNativeJsonToOpenaiEmbeddings } from './native-json--openai-embeddings/index.js';
import { createNativeJsonToOpenaiModerations } from './native-json--openai-moderations/index.js';
import { createNativeJsonToOpenaiImages } from './native-json--openai-images/index.js';
import { createNativeJsonToOpenaiImageEdits } from './native-json--openai-image-edits/index.js';
import { createNativeJsonToOpenaiVideos } from './native-json--openai-videos/index.js';
import { createNativeJsonToOpenaiSpeech } from './native-json--openai-speech/index.js';
import { createNativeJsonToOpenaiTranscriptions } from './native-json--openai-transcriptions/index.js';
import { createOpenaiChatToAnthropicMessages } from './openai-chat--anthropic-messages/index.js';
import { createAnthropicMessagesToBedrockConverse } from './anthropic-messages--bedrock-converse/index.js';
import { createOpenaiChatToBedrockConverse } from './openai-chat--bedrock-converse/index.js';
import { createOpenaiChatToOpenaiChat } from './openai-chat--openai-chat/index.js';
import { createOpenaiChatToGeminiGenerateContent } from './openai-chat--gemini-generate-content/index.js';
import { createOpenaiResponsesToOpenaiChat } from './openai-responses--openai-chat/index.js';
import { createOpenaiResponsesToOpenaiResponses } from './openai-responses--openai-responses/index.js';
import { clientFormat, findClientFormat } from '../formats/index.js';
import { chainTranslators } from './chain.js';
import type { Translator, TranslatorFactory, TranslatorOptions } from './types.js';

const TRANSLATORS = new Map<string, TranslatorFactory>([
  ['openai-chat--openai-chat', createOpenaiChatToOpenaiChat],
  ['openai-chat--anthropic-messages', createOpenaiChatToAnthropicMessages],
  ['openai-chat--gemini-generate-content', createOpenaiChatToGeminiGenerateContent],
  ['openai-chat--bedrock-converse', createOpenaiChatToBedrockConverse],
  ['anthropic-messages--bedrock-converse', createAnthropicMessagesToBedrockConverse],
  ['openai-responses--openai-responses', createOpenaiResponsesToOpenaiResponses],
  ['openai-responses--openai-chat', createOpenaiResponsesToOpenaiChat],
  ['anthropic-messages--anthropic-messages', createAnthropicMessagesToAnthropicMessages],
  ['anthropic-messages--anthropic-count-tokens', createAnthropicMessagesToAnthropicCountTokens],
  ['anthropic-messages--gemini-generate-content', createAnthropicMessagesToGeminiGenerateContent],
  ['native-json--cohere-rerank', createNativeJsonToCohereRerank],
  ['cohere--cohere-rerank', createCohereToCohereRerank],
  ['cohere--cohere-embed', createCohereToCohereEmbed],
  ['native-json--azure-translator', createNativeJsonToAzureTranslator],
  ['native-json--azure-document-translation', createNativeJsonToAzureDocumentTranslation],
  ['native-json--pii-redaction', createNativeJsonToPiiRedaction],
  ['native-json--azure-content-safety', createNativeJsonToAzureContentSafety],
  ['native-json--azure-content-safety-image', createNativeJsonToAzureContentSafetyImage],
  ['native-json--azure-image-analysis', createNativeJsonToAzureImageAnalysis],
  ['native-json--azure-di-read', createNativeJsonToAzureDiRead],
  ['native-json--azure-di-layout', createNativeJsonToAzureDiLayout],
  ['native-json--azure-language-analyze', createNativeJsonToAzureLanguageAnalyze],
  ['native-json--azure-language-summarize', createNativeJsonToAzureLanguageSummarize],
  ['native-json--openai-embeddings', createNativeJsonToOpenaiEmbeddings],
  ['native-json--openai-transcriptions', createNativeJsonToOpenaiTranscriptions],
  ['native-json--openai-speech', createNativeJsonToOpenaiSpeech],
  ['native-json--openai-moderations', createNativeJsonToOpenaiModerations],
  ['native-json--openai-images', createNativeJsonToOpenaiImages],
  ['native-json--bfl-flux', createNativeJsonToBflFlux],
  ['native-json--openai-image-edits', createNativeJsonToOpenaiImageEdits],
  ['native-json--openai-videos', createNativeJsonToOpenaiVideos],
  ['native-json--cohere-embed', createNativeJsonToCohereEmbed],
  ['native-json--elevenlabs-tts', createNativeJsonToElevenlabsTts],
  ['native-json--elevenlabs-sound-generation', createNativeJsonToElevenlabsSoundGeneration],
]);

/**
 * A pair no folder translates, reached through one middle format (issue 31 item 2: responses ->
 * chat -> messages): `<from>--<middle>` and `<middle>--<to>` both registered, the middle a client
 * format (its stream terminator ends the inner half), neither half an identity. Looked up for the
 * pairs routes ask for (checked at boot, src/config/checks.ts); the first middle in registration
 * order wins, so the choice is stable. Each chain a route uses has its own golden fixtures folder.
 */
const CHAINS = new Map<string, TranslatorFactory | null>();

function chainFor(from: string, to: string): TranslatorFactory | null {
  const pair = `${from}--${to}`;
  if (CHAINS.has(pair)) return CHAINS.get(pair)!;
  let found: TranslatorFactory | null = null;
  for (const [first, outer] of TRANSLATORS) {
    const [start, middle] = first.split('--') as [string, string];
    const inner = TRANSLATORS.get(`${middle}--${to}`);
    if (start !== from || middle === from || middle === to || !inner || !findClientFormat(middle)) continue;
    found = chainTranslators({ outer, inner, middleDone: clientFormat(middle).streamDoneFrame });
    break;
  }
  CHAINS.set(pair, found);
  return found;
}

/** Every registered `<client>--<upstream>` pair (each must have golden fixtures). */
export function translatorPairs(): string[] {
  return [...TRANSLATORS.keys()];
}

/** True when a translator exists for the pair, directly or through a middle format. */
export function hasTranslator(clientFormat: string, upstreamFormat: string): boolean {
  return TRANSLATORS.has(`${clientFormat}--${upstreamFormat}`) || chainFor(clientFormat, upstreamFormat) !== null;
}

/** A fresh translator for one request; a model whose format this route cannot reach is a client error. */
export function createTranslator(clientFormat: string, upstreamFormat: string, clientBody: Record<string, unknown>, model: string, options: TranslatorOptions = { params: {} }): Translator {
  const factory = TRANSLATORS.get(`${clientFormat}--${upstreamFormat}`) ?? chainFor(clientFormat, upstreamFormat);
  if (!factory) throw new GatewayError('model_not_available', `Model "${model}" cannot be used on this endpoint.`, { param: 'model' });
  return factory(clientBody, options);
}
