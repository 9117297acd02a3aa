/**
 * The native language analysis request (spec 4.10) to Azure AI Language's synchronous
 * `POST /language/:analyze-text?api-version=2026-05-01` (docs/vendors/native-ops.md 5a): one task of
 * `kind` (SentimentAnalysis when absent) over the documents, each with the client's `language` or
 * `auto`; offsets and lengths in Unicode code points. The answer comes back per document, by position,
 * in snake_case; documents the upstream failed are listed in `errors`. `quantities.text_records` (the
 * meter's source) counts only the analysed documents: each one's text elements in 1,000-element
 * records, rounded up on its own (spec 1).
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { analysisInput, documentsOf, malformed, readDocuments } from '../azure-language.js';
import { azureCoreError } from '../upstream-error.js';

type Kind = 'SentimentAnalysis' | 'EntityRecognition' | 'KeyPhraseExtraction' | 'PiiEntityRecognition' | 'LanguageDetection';

/** Documents per synchronous request, by kind (Microsoft's data limits; over them the whole request is refused). */
export const MAX_DOCUMENTS: Readonly<Record<Kind, number>> = {
  SentimentAnalysis: 10, KeyPhraseExtraction: 10, EntityRecognition: 5, PiiEntityRecognition: 5, LanguageDetection: 1000,
};

/** Kinds whose results carry offsets: asked for in code points (Azure's default counts text elements). */
const OFFSETS = new Set<Kind>(['SentimentAnalysis', 'EntityRecognition', 'PiiEntityRecognition']);

/** Creates the analysis translator for one request; refuses, before anything is reserved, what the vendor would. */
export function createNativeJsonToAzureLanguageAnalyze(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const kind = (clientBody.kind ?? 'SentimentAnalysis') as Kind;
  const texts = documentsOf(clientBody.text);
  if (texts.length > MAX_DOCUMENTS[kind]) {
    throw new GatewayError('invalid_request', `${kind} takes at most ${MAX_DOCUMENTS[kind]} documents per request; 'text' has ${texts.length}.`, { param: 'text' });
  }
  const detection = kind === 'LanguageDetection';
  if (detection && clientBody.language !== undefined) {
    throw new GatewayError('unsupported_parameter', "LanguageDetection finds the language itself: it takes no 'language'.", { param: 'language' });
  }
  const language = detection ? null : typeof clientBody.language === 'string' ? clientBody.language : 'auto';
  return {
    request: () => ({
      kind,
      analysisInput: analysisInput(texts, language),
      ...(OFFSETS.has(kind) ? { parameters: { stringIndexType: 'UnicodeCodePoint' } } : {}),
    }),
    response(upstream, clientModel) {
      if (upstream.kind !== `${kind}Results`) throw malformed();
      const { documents, errors, usage } = readDocuments(upstream.results, texts, () => []);
      return {
        body: { object: 'language.analysis', model: clientModel, kind, documents, errors, usage },
        usage: null, outputText: '', quantities: { text_records: usage.text_records },
      };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Language analysis does not stream.'); },
    error: azureCoreError,
  };
}
