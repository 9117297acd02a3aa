/**
 * The native summarization request (spec 4.10) to Azure AI Language's analyze-text jobs
 * (`POST /language/analyze-text/jobs?api-version=2026-05-01`, docs/vendors/native-ops.md 5b and 5c):
 * one ExtractiveSummarization or AbstractiveSummarization task over up to 25 documents. The job is
 * polled by the engine (the operation's `poll:`); `response()` reads its final state. `mode` is
 * extractive unless given, or unless `summary_length` asks for an abstract; a parameter of the other
 * mode is refused, never dropped. The answer comes back per document, by position, in snake_case
 * (extractive: `sentences`, abstractive: `summaries`); `quantities.text_records` counts each analysed
 * document together with its generated summary, in 1,000-element records rounded up per document
 * (spec 1). A task that did not succeed is a 502 and charges nothing.
 */
import { GatewayError } from '../../errors.js';
import { textElements } from '../../meters/counters/text-elements.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { analysisInput, documentsOf, malformed, readDocuments, textsOf } from '../azure-language.js';
import { azureCoreError } from '../upstream-error.js';

/** Text elements of all documents of one job (Microsoft's data limits; over it the whole job is refused). */
export const MAX_JOB_ELEMENTS = 125_000;

/** The task's name in the job (the answer's task item is found by it). */
const TASK_NAME = 'summarize';

type Mode = 'extractive' | 'abstractive';

/** The summary type: as given; else abstractive when only abstract options are given; else extractive. */
function modeOf(body: Record<string, unknown>): Mode {
  if (body.mode === 'extractive' || body.mode === 'abstractive') return body.mode;
  return body.summary_length !== undefined ? 'abstractive' : 'extractive';
}

/** Refuses a parameter of the other mode, naming it and the mode it belongs to. */
function checkParameters(body: Record<string, unknown>, mode: Mode): void {
  const other: Record<Mode, string[]> = { extractive: ['summary_length'], abstractive: ['sentence_count', 'sort_by'] };
  const stray = other[mode].find((name) => body[name] !== undefined);
  if (stray) {
    const belongs = mode === 'extractive' ? 'abstractive' : 'extractive';
    throw new GatewayError('unsupported_parameter', `'${stray}' applies to ${belongs} summaries; this request asks for ${mode} ones (mode: ${mode}).`, { param: stray });
  }
}

/** Creates the summarization translator for one request; refuses, before anything is reserved, what the vendor would. */
export function createNativeJsonToAzureLanguageSummarize(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const texts = documentsOf(clientBody.text);
  const mode = modeOf(clientBody);
  checkParameters(clientBody, mode);
  let elements = 0;
  for (const text of texts) elements += textElements(text);
  if (elements > MAX_JOB_ELEMENTS) {
    throw new GatewayError('invalid_request', `A summarization request takes at most ${MAX_JOB_ELEMENTS} text elements in all; 'text' has ${elements}.`, { param: 'text' });
  }
  const kind = mode === 'extractive' ? 'ExtractiveSummarization' : 'AbstractiveSummarization';
  const parameters: Record<string, unknown> = mode === 'extractive'
    ? { ...(clientBody.sentence_count !== undefined ? { sentenceCount: clientBody.sentence_count } : {}), ...(clientBody.sort_by !== undefined ? { sortBy: clientBody.sort_by } : {}) }
    : { ...(clientBody.summary_length !== undefined ? { summaryLength: clientBody.summary_length } : {}) };
  const language = typeof clientBody.language === 'string' ? clientBody.language : 'auto';
  /** The generated text of one document: its extracted sentences or its abstract(s). */
  const outputs = (doc: Record<string, unknown>): string[] => textsOf(mode === 'extractive' ? doc.sentences : doc.summaries);
  return {
    request: () => ({
      analysisInput: analysisInput(texts, language),
      tasks: [{ kind, taskName: TASK_NAME, parameters: { ...parameters, stringIndexType: 'UnicodeCodePoint' } }],
    }),
    response(upstream, clientModel) {
      const items = (upstream.tasks as { items?: unknown } | undefined)?.items;
      if (!Array.isArray(items)) throw malformed('summarization');
      const task = (items as Array<Record<string, unknown>>).find((t) => t && t.kind === `${kind}LROResults`);
      if (!task) throw malformed('summarization');
      if (task.status !== 'succeeded' || !task.results) {
        throw new GatewayError('upstream_error', `The upstream summarization task ended with status "${String(task.status)}".`);
      }
      const { documents, errors, usage } = readDocuments(task.results, texts, outputs);
      return {
        body: { object: 'language.summary', model: clientModel, mode, documents, errors, usage },
        usage: null, outputText: '', quantities: { text_records: usage.text_records },
      };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Summarization does not stream.'); },
    error: azureCoreError,
  };
}
