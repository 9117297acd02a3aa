/** Generated files are committed; this fails when they drift from the manifests and schemas. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateAll } from '../../codegen/generate.js';
import { projectRoot } from '../../src/paths.js';

describe('codegen', () => {
  it('src/generated matches what `npm run codegen` would write', async () => {
    const files = await generateAll(projectRoot());
    expect([...files.keys()].sort()).toEqual(['src/generated/manifest-types.ts', 'src/generated/openapi.json', 'src/generated/route-table.ts']);
    for (const [file, content] of files) {
      const committed = await readFile(join(projectRoot(), file), 'utf8');
      expect(committed, `${file} drifted: run npm run codegen`).toBe(content);
      expect(committed).toMatch(/AUTO-GENERATED .* DO NOT EDIT/);
    }
  });

  it('documents every route with both auth schemes and the error responses', async () => {
    const doc = JSON.parse((await generateAll(projectRoot())).get('src/generated/openapi.json')!);
    expect(doc.openapi).toBe('3.1.0');
    // API keys in two header styles (spec 5); the console's session cookie only on the console's pages (issue 13);
    // the admin token on the admin API and the metrics token on GET /metrics (issue 33 item 4, api/*.yaml).
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'apiKey', 'bearer', 'consoleSession', 'metricsToken']);
    expect(doc.paths['/admin/accounts'].post.security).toEqual([{ adminToken: [] }]);
    expect(doc.paths['/metrics'].get.security).toEqual([{}, { metricsToken: [] }]);
    const chat = doc.paths['/v1/chat/completions'].post;
    expect(chat.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(Object.keys(chat.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '429', '502']));
    expect(Object.keys(chat.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(chat.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ChatCompletionRequest');
    expect(doc.paths['/v1/models/{model}'].get.parameters[0]).toMatchObject({ name: 'model', in: 'path' });
    // The gateway's own list handlers document the query parameters they read.
    const queryOf = (path: string): string[] => doc.paths[path].get.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name);
    expect(queryOf('/v1/files')).toEqual(['limit', 'page', 'after_id']);
    expect(queryOf('/v1/skills')).toEqual(['source', 'limit']);
    expect(queryOf('/v1/models')).toEqual(['service_type']);
  });
});
