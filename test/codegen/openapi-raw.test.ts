/**
 * The OpenAPI document of a raw body route (issue 9 point 3): the body is the bytes, under each
 * Content-Type the route accepts, and the route's parameters are query parameters with their
 * request schema's property schemas.
 */
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../codegen/openapi.js';
import { compileGateway } from '../../src/config/compile.js';
import { loadGateway } from '../../src/config/load.js';
import { copyConfig } from '../helpers/config.js';

describe('OpenAPI of a raw body route', () => {
  it('lists the accepted types as binary bodies and the query fields as parameters', async () => {
    const copy = await copyConfig();
    await copy.write('routes/pii-raw.yaml', [
      'version: 1', 'id: pii-raw', 'summary: Redact a PDF sent as the body (test).', 'method: POST', 'path: /v1/pii-raw',
      'format: native-json', 'handler: proxy', 'schemas: { request: native-json/documents-redact-pii-request.json }',
      'query_fields: [language, model]', 'service_types: [PII_REDACTION]', 'model: { required: false, default: pii-redaction }',
      'body: { type: raw, part: document, max_bytes: 2048, mime: [application/pdf, application/octet-stream] }',
      'file_answer: application/pdf', 'meter: { page: { source: { constant: 1 } } }', 'upstreams: [{ operation: redact-pdf }]', '',
    ].join('\n'));
    const gateway = await compileGateway(await loadGateway(copy.configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:0' });
    const op = (buildOpenApi(gateway, '0.0.0') as any).paths['/v1/pii-raw'].post;
    expect(op.requestBody).toEqual({
      required: true,
      description: "The 'document' file as the whole body, at most 2048 bytes; Content-Type one of: application/pdf, application/octet-stream.",
      content: {
        'application/pdf': { schema: { type: 'string', format: 'binary' } },
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
      },
    });
    const query = op.parameters.filter((p: { in: string }) => p.in === 'query');
    expect(query.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([['language', false], ['model', false]]);
    expect(query[0].schema).toEqual({ type: 'string', pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' });
    expect(query[0].description).toMatch(/language code/);
  });
});
