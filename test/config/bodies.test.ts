/**
 * Bodies as data (issue 9 point 3), checked at boot, hot reload and codegen with file, path and reason:
 * a route's raw body (limits, accepted types, the request schema its query parameters need), an
 * operation's upstream request kind (only a POST sends a body) and answer kind (sse for the operations
 * a streaming route calls; a polled job never streams).
 */
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';

const CONTEXT = { env: {}, simulatorUrl: 'http://127.0.0.1:1' };

async function refusal(edit: (c: ConfigCopy) => Promise<void>): Promise<ManifestError> {
  const copy = await copyConfig();
  await edit(copy);
  const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, CONTEXT)).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ManifestError);
  return error as ManifestError;
}

/** A raw-body route for PDFs on the redaction operation, with `body` and `schemas` as given. */
function rawRoute(body: string, schemas = '{ request: native-json/documents-redact-pii-request.json }'): string {
  return [
    'version: 1', 'id: pii-raw', 'summary: Redact a PDF sent as the body (test).', 'method: POST', 'path: /v1/pii-raw',
    'format: native-json', 'handler: proxy', `schemas: ${schemas}`, 'query_fields: [language, model]', 'service_types: [PII_REDACTION]',
    'model: { required: false, default: pii-redaction }', `body: ${body}`, 'file_answer: application/pdf',
    'meter: { page: { source: { constant: 1 } } }', 'upstreams: [{ operation: redact-pdf }]', '',
  ].join('\n');
}

describe('raw request bodies', () => {
  it('compiles a raw body: its part (default `file`), bound, types, and the oversize error of a multipart part', async () => {
    const copy = await copyConfig();
    await copy.write('routes/pii-raw.yaml', rawRoute('{ type: raw, max_bytes: 2048, mime: [application/pdf], probe: pdf }'));
    const gateway = await compileGateway(await loadGateway(copy.configFile), CONTEXT);
    const route = gateway.routes.find((r) => r.manifest.id === 'pii-raw')!;
    expect(route.raw).toEqual({ part: 'file', maxBytes: 2048, mime: new Set(['application/pdf']), oversize: 'payload_too_large', probe: 'pdf' });
    expect(route.multipart).toBeNull();
    expect(gateway.routes.find((r) => r.manifest.id === 'documents-redact-pii')!.raw).toBeNull();
  });

  it('refuses a raw body without a bound or types, or with a multipart key', async () => {
    const noMime = await refusal((c) => c.write('routes/pii-raw.yaml', rawRoute('{ type: raw, max_bytes: 2048 }')));
    expect(noMime).toMatchObject({ file: 'routes/pii-raw.yaml', path: '/body', reason: "must have required property 'mime'" });
    const noBound = await refusal((c) => c.write('routes/pii-raw.yaml', rawRoute('{ type: raw, mime: [application/pdf] }')));
    expect(noBound).toMatchObject({ path: '/body', reason: "must have required property 'max_bytes'" });
    const files = await refusal((c) => c.write('routes/pii-raw.yaml', rawRoute('{ type: raw, max_bytes: 2048, mime: [application/pdf], files: { document: { max_bytes: 1 } } }')));
    expect(files).toMatchObject({ path: '/body/files', reason: '"files" is not allowed here' });
    const rawKeyOnForm = await refusal((c) => c.editYaml('routes/documents-redact-pii.yaml', (d) => { d.body.mime = ['application/pdf']; }));
    expect(rawKeyOnForm).toMatchObject({ file: 'routes/documents-redact-pii.yaml', path: '/body/mime', reason: '"mime" is not allowed here' });
  });

  it('refuses a raw body route with no request schema for its parameters', async () => {
    const e = await refusal((c) => c.write('routes/pii-raw.yaml', rawRoute('{ type: raw, max_bytes: 2048, mime: [application/pdf] }', '{}').replace('query_fields: [language, model]\n', '')));
    expect(e).toMatchObject({ file: 'routes/pii-raw.yaml', path: '/schemas/request' });
    expect(e.reason).toBe('a raw body route takes its parameters from the query: declare the request schema that validates them');
  });

  it('refuses a raw type the gateway parses itself', async () => {
    const e = await refusal((c) => c.write('routes/pii-raw.yaml', rawRoute('{ type: raw, max_bytes: 2048, mime: [application/pdf, text/plain, multipart/form-data] }')));
    expect(e).toMatchObject({ file: 'routes/pii-raw.yaml', path: '/body/mime/2' });
    expect(e.reason).toBe("multipart/form-data is read by the gateway's own parser, so a raw body cannot take it (raw types: any but application/json, multipart/form-data)");
  });
});

describe('operation request and answer kinds', () => {
  it('compiles each operation\'s request (json by default) and answer', async () => {
    const gateway = await compileGateway(await loadGateway((await copyConfig()).configFile), CONTEXT);
    const kinds = (provider: string, op: string) => {
      const o = gateway.providers.get(provider)!.operations[op]!;
      return [o.request, o.answer];
    };
    expect(kinds('openai', 'chat-completions')).toEqual(['json', 'sse']);
    expect(kinds('openai', 'embeddings')).toEqual(['json', 'json']);
    expect(kinds('openai', 'images-edits')).toEqual(['multipart', 'json']);
    expect(kinds('anthropic', 'files-upload')).toEqual(['multipart', 'json']);
    expect(kinds('azure_document_translation', 'document-translate')).toEqual(['multipart', 'binary']);
    expect(kinds('pii_redaction', 'redact-pdf')).toEqual(['raw', 'binary']);
    expect(kinds('azure_vision', 'image-analysis')).toEqual(['raw', 'json']);
  });

  it('refuses a body on an operation that sends none', async () => {
    const e = await refusal((c) => c.editYaml('providers/anthropic.yaml', (d) => { d.operations['files-get'].request = 'raw'; }));
    expect(e).toMatchObject({ file: 'providers/anthropic.yaml', path: '/operations/files-get/request' });
    expect(e.reason).toBe('a GET operation sends no body, so it cannot declare request: raw');
  });

  it('refuses an sse answer on a polled job', async () => {
    const e = await refusal((c) => c.editYaml('providers/azure-language.yaml', (d) => { d.operations.summarize.answer = { type: 'sse' }; }));
    expect(e).toMatchObject({ file: 'providers/azure-language.yaml', path: '/operations/summarize/answer/type' });
    expect(e.reason).toBe('an operation answered by a job to poll (poll) cannot answer sse');
  });

  it('refuses a streaming route whose operation does not answer sse', async () => {
    const e = await refusal((c) => c.editYaml('providers/openai.yaml', (d) => { delete d.operations['chat-completions'].answer; }));
    expect(e).toMatchObject({ file: 'routes/chat-completions.yaml', path: '/upstreams/0' });
    expect(e.reason).toBe('the route streams (stream.when /stream) but operation "chat-completions" of provider openai answers json: declare answer: {type: sse} if it streams');
  });
});
