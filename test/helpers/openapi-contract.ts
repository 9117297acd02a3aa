/**
 * The generated OpenAPI document as a contract: validates a real answer against the schema the
 * document gives its operation, status and media type (Ajv 2020-12, the document's dialect), so a
 * test fails when the gateway answers something its document does not describe.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { projectRoot } from '../../src/paths.js';

type Json = Record<string, any>;

/** The committed document, src/generated/openapi.json. */
export function generatedDocument(): Json {
  return JSON.parse(readFileSync(join(projectRoot(), 'src/generated/openapi.json'), 'utf8')) as Json;
}

/** Checks answers against one document; `check` returns the operation id it matched. */
export interface AnswerChecker {
  /** Throws (naming the operation and Ajv's errors) unless `body` fits the documented answer. */
  check(method: string, path: string, status: number, body: unknown, media?: string): string;
  /** The operation ids `check` has accepted an answer of, so a test can ask that it covered them all. */
  covered: Set<string>;
}

/** A checker over `doc`. `path` is the document's template, e.g. `/admin/accounts/{id}`. */
export function answerChecker(doc: Json): AnswerChecker {
  // OpenAPI keywords beside JSON Schema ones (discriminator, example) are not JSON Schema: not strict.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  const compiled = new Map<string, ValidateFunction>();
  const covered = new Set<string>();
  return {
    covered,
    check(method, path, status, body, media = 'application/json') {
      const op = doc.paths?.[path]?.[method.toLowerCase()];
      if (!op) throw new Error(`the document has no operation ${method} ${path}`);
      const answer = op.responses?.[String(status)];
      if (!answer) throw new Error(`${op.operationId}: the document has no ${status} answer`);
      const schema = answer.content?.[media]?.schema;
      if (!schema) throw new Error(`${op.operationId} ${status}: the document has no ${media} answer`);
      const key = `${method} ${path} ${status} ${media}`;
      let validate = compiled.get(key);
      if (!validate) {
        validate = ajv.compile(schema.$ref ? { $ref: `openapi.json${String(schema.$ref)}` } : schema);
        compiled.set(key, validate);
      }
      if (!validate(body)) throw new Error(`${op.operationId} ${status}: the answer does not fit the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
      covered.add(op.operationId as string);
      return op.operationId as string;
    },
  };
}
