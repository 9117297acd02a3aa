/**
 * The Azure Content Safety and Language translators beyond their golden fixtures: answers that do not
 * fit (a wrong kind, unknown or repeated document ids, a task that did not succeed, a severity that is
 * not an integer) are the upstream's fault (502, nothing charged); Azure.Core errors show the inner
 * message of a request error and never the text of an authentication failure.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { readDocuments, snakeKeys } from '../../src/translate/azure-language.js';
import { azureCoreError } from '../../src/translate/upstream-error.js';
import { createTranslator } from '../../src/translate/registry.js';

const analyze = (body: Record<string, unknown>) => createTranslator('native-json', 'azure-language-analyze', { model: 'language-standard', ...body }, 'language-standard');
const summarize = (body: Record<string, unknown>) => createTranslator('native-json', 'azure-language-summarize', { model: 'language-standard', ...body }, 'language-standard');
const moderate = (body: Record<string, unknown>) => createTranslator('native-json', 'azure-content-safety', { model: 'content-safety-text', ...body }, 'content-safety-text');

function upstreamFault(run: () => unknown): GatewayError {
  let caught: unknown = null;
  try { run(); } catch (error) { caught = error; }
  expect(caught).toBeInstanceOf(GatewayError);
  expect(caught).toMatchObject({ code: 'upstream_error', status: 502 });
  return caught as GatewayError;
}

describe('language analysis answers', () => {
  const ok = { id: '0', sentiment: 'neutral', confidenceScores: { positive: 0.1, neutral: 0.8, negative: 0.1 }, sentences: [], warnings: [] };

  it('refuses an answer of another kind, or documents it did not ask about', () => {
    const t = analyze({ text: ['a', 'b'] });
    upstreamFault(() => t.response({ kind: 'EntityRecognitionResults', results: { documents: [], errors: [] } }, 'language-standard'));
    upstreamFault(() => t.response({ kind: 'SentimentAnalysisResults', results: { documents: [{ ...ok, id: '2' }], errors: [] } }, 'language-standard'));
    upstreamFault(() => t.response({ kind: 'SentimentAnalysisResults', results: { documents: [ok], errors: [{ id: '0', error: { code: 'x', message: 'y' } }] } }, 'language-standard'));
    upstreamFault(() => t.response({ kind: 'SentimentAnalysisResults', results: { documents: [{ ...ok, id: '00' }], errors: [] } }, 'language-standard'));
    upstreamFault(() => t.response({ kind: 'SentimentAnalysisResults', results: { documents: 'none' } }, 'language-standard'));
    upstreamFault(() => t.response({ kind: 'SentimentAnalysisResults' }, 'language-standard'));
  });

  it('bills only the documents it analysed; a missing one is incomplete and free', () => {
    const t = analyze({ text: ['x'.repeat(1001), 'never answered'] });
    const answer = t.response({ kind: 'SentimentAnalysisResults', results: { documents: [ok], errors: [], modelVersion: 'v' } }, 'language-standard');
    expect(answer.quantities).toEqual({ text_records: 2 });
    expect(answer.body.errors).toEqual([{ index: 1, code: 'incomplete', message: 'The upstream provider returned no result for this document; it is not billed.' }]);
    expect(answer.body.usage).toEqual({ input_elements: 1001, output_elements: 0, text_records: 2 });
  });

  it('counts a summary with its document, rounded once per document', () => {
    const read = readDocuments({ documents: [{ id: '1', s: ['b'.repeat(500)] }, { id: '0', s: ['a'.repeat(250), 'a'.repeat(251)] }], errors: [] }, ['x'.repeat(500), 'y'.repeat(500)], (d) => d.s as string[]);
    // Document 0: 500 + 501 = 1,001 elements, 2 records; document 1: 500 + 500, 1 record.
    expect(read.usage).toEqual({ input_elements: 1000, output_elements: 1001, text_records: 3 });
    expect(read.documents.map((d) => d.index)).toEqual([0, 1]);
  });
});

describe('summarization answers', () => {
  const job = (task: Record<string, unknown>) => ({ jobId: 'j', status: 'succeeded', tasks: { completed: 1, failed: 0, inProgress: 0, total: 1, items: [task] } });

  it('refuses a task that did not succeed, a missing task, or a summary that is not text', () => {
    const t = summarize({ text: 'Some text.' });
    const failed = upstreamFault(() => t.response(job({ kind: 'ExtractiveSummarizationLROResults', status: 'failed' }), 'language-standard'));
    expect(failed.message).toBe('The upstream summarization task ended with status "failed".');
    upstreamFault(() => t.response(job({ kind: 'AbstractiveSummarizationLROResults', status: 'succeeded', results: { documents: [], errors: [] } }), 'language-standard'));
    upstreamFault(() => t.response({ jobId: 'j', status: 'succeeded', tasks: {} }, 'language-standard'));
    upstreamFault(() => t.response(job({ kind: 'ExtractiveSummarizationLROResults', status: 'succeeded', results: { documents: [{ id: '0', sentences: [{ text: 5 }] }], errors: [] } }), 'language-standard'));
  });

  it('picks the mode from the options: extractive by default, abstractive for summary_length', () => {
    expect((summarize({ text: 'x' }).request({}, null as never) as any).tasks[0].kind).toBe('ExtractiveSummarization');
    expect((summarize({ text: 'x', summary_length: 'long' }).request({}, null as never) as any).tasks[0]).toEqual({ kind: 'AbstractiveSummarization', taskName: 'summarize', parameters: { summaryLength: 'long', stringIndexType: 'UnicodeCodePoint' } });
    expect((summarize({ text: 'x', mode: 'abstractive' }).request({}, null as never) as any).tasks[0].parameters).toEqual({ stringIndexType: 'UnicodeCodePoint' });
  });
});

describe('moderation answers', () => {
  it('refuses an answer without categories or with a severity that is not an integer; a missing severity is null', () => {
    const t = moderate({ text: 'hi' });
    upstreamFault(() => t.response({}, 'content-safety-text'));
    upstreamFault(() => t.response({ categoriesAnalysis: [{ category: 'Hate', severity: 'low' }] }, 'content-safety-text'));
    upstreamFault(() => t.response({ categoriesAnalysis: [{ severity: 2 }] }, 'content-safety-text'));
    expect(t.response({ categoriesAnalysis: [{ category: 'Hate' }] }, 'content-safety-text').body.categories_analysis).toEqual([{ category: 'Hate', severity: null }]);
  });
});

describe('Azure Language errors', () => {
  it('shows the inner message of a request error, hides an authentication failure, keeps a 429 a 429', () => {
    const bad = azureCoreError(400, { error: { code: 'InvalidRequest', message: 'Invalid Request.', innererror: { code: 'InvalidDocumentBatch', message: 'Batch request contains too many records.' } } }, {});
    expect(bad).toMatchObject({ code: 'invalid_request', status: 400, message: 'Batch request contains too many records.' });
    expect(azureCoreError(400, { error: { code: 'InvalidRequest', message: 'Plain message.' } }, {}).message).toBe('Plain message.');
    const auth = azureCoreError(401, { error: { code: '401', message: 'Access denied due to invalid subscription key abc123.' } }, {});
    expect(auth).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(auth.message).not.toContain('abc123');
    expect(azureCoreError(429, null, { 'retry-after': '7' })).toMatchObject({ code: 'upstream_rate_limited', status: 429 });
  });

  it('writes vendor fields in snake_case at every level, values untouched', () => {
    expect(snakeKeys({ detectedLanguage: { iso6391Name: 'fr', confidenceScore: 1 }, keyPhrases: ['keyPhrases'], redactedText: 'x' }))
      .toEqual({ detected_language: { iso6391_name: 'fr', confidence_score: 1 }, key_phrases: ['keyPhrases'], redacted_text: 'x' });
  });
});
