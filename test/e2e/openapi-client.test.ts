/**
 * A client generated from the OpenAPI document drives the gateway (issue 33 item 4). The test run
 * generates TypeScript types from the document a real gateway serves (openapi-typescript), compiles
 * test/openapi-client/program.ts against them with tsc (a type error fails the test), checks that
 * tsc refuses exactly the marked calls of wrong-calls.ts (so the types constrain), then runs the
 * compiled program with openapi-fetch: the admin API's account, key, top-up and usage calls (admin
 * token), a JSON route, a multipart upload and a binary download.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { answerChecker, generatedDocument } from '../helpers/openapi-contract.js';

const run = promisify(execFile);
const SOURCES = join(projectRoot(), 'test/openapi-client');
const TSC = join(projectRoot(), 'node_modules/typescript/bin/tsc');

/** openapi-typescript's output for `doc`, with `format: binary` as Blob (what a multipart part and a download are). */
async function generateTypes(doc: unknown): Promise<string> {
  const blob = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'));
  const ast = await openapiTS(doc as Parameters<typeof openapiTS>[0], { transform: (schema) => (schema.format === 'binary' ? blob : undefined) });
  return astToString(ast);
}

/** Runs tsc on `file` in `dir` (strict, NodeNext); the exit code and its diagnostics. */
async function tsc(dir: string, file: string, emit: boolean): Promise<{ code: number; output: string }> {
  const config = { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: ['node'], outDir: 'out', rootDir: '.', noEmit: !emit }, files: [file] };
  writeFileSync(join(dir, `tsconfig.${file}.json`), JSON.stringify(config));
  try {
    const { stdout } = await run(process.execPath, [TSC, '-p', join(dir, `tsconfig.${file}.json`), '--pretty', 'false'], { cwd: dir });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe.runIf(storeKind === 'pglite')('a client generated from the OpenAPI document', () => {
  let t: TestGateway;
  let dir: string;

  beforeAll(async () => {
    t = await startTestGateway();
    // A scratch package beside the project's dependencies: ESM, with openapi-fetch and @types/node resolvable.
    dir = mkdtempSync(join(tmpdir(), 'gw-openapi-client-'));
    symlinkSync(join(projectRoot(), 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    for (const file of ['program.ts', 'wrong-calls.ts']) copyFileSync(join(SOURCES, file), join(dir, file));
  }, 60_000);

  afterAll(async () => {
    await t?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is generated from the served document (the committed one) and compiles', async () => {
    const served = await fetch(`${t.url}/openapi.json`);
    expect(served.status).toBe(200);
    const text = await served.text();
    expect(text).toBe(readFileSync(join(projectRoot(), 'src/generated/openapi.json'), 'utf8'));
    writeFileSync(join(dir, 'schema.ts'), await generateTypes(JSON.parse(text)));
    const compiled = await tsc(dir, 'program.ts', true);
    expect(compiled.output).toBe('');
    expect(compiled.code).toBe(0);
  }, 120_000);

  it('refuses exactly the calls the document does not allow', async () => {
    const result = await tsc(dir, 'wrong-calls.ts', false);
    expect(result.code).not.toBe(0);
    const refused = [...new Set([...result.output.matchAll(/^wrong-calls\.ts\((\d+),\d+\): error TS/gm)].map((m) => Number(m[1])))];
    const marked = readFileSync(join(SOURCES, 'wrong-calls.ts'), 'utf8').split('\n').flatMap((line, i) => (line.trimEnd().endsWith('// type error') ? [i + 1] : []));
    expect(marked.length).toBeGreaterThan(3);
    expect(refused.sort((a, b) => a - b), result.output).toEqual(marked);
  }, 120_000);

  it('drives the gateway: admin calls, a JSON route, a multipart upload, a binary download', async () => {
    // The program's own types come from the generated schema, which this project does not see: its answers are checked here.
    type Answers = Record<string, any>;
    interface Program { runClient(url: string, token: string): Promise<Answers>; readBack(url: string, token: string, accountId: string, keyId: string): Promise<Answers> }
    const program = (await import(pathToFileURL(join(dir, 'out/program.js')).href)) as Program;
    const calls = await program.runClient(t.url, ADMIN_TOKEN);
    expect(calls.health).toEqual({ status: 'ok' });
    expect(calls.ready.status).toBe('ok');
    expect(calls.account.key).toMatch(/^gw-/);
    expect(calls.toppedUp).toMatchObject({ id: calls.account.id, balance_usd: '3.5' });
    expect(calls.rotated.key).not.toBe(calls.secondKey.key);
    expect(calls.chat.choices[0]?.message.content).toBeTruthy();
    expect(calls.upload).toMatchObject({ type: 'file', filename: 'file.txt', size_bytes: 51 });
    expect(calls.speech.contentType).toBe('audio/mpeg');
    expect(calls.speech.bytes.length).toBeGreaterThan(0);
    expect(calls.missing).toMatchObject({ status: 404, error: { error: { code: 'not_found' } } });

    await t.gw.postGrants(); // charges answered on a credit grant are posted behind the answer
    const back = await program.readBack(t.url, ADMIN_TOKEN, calls.account.id, calls.account.key_id);
    expect(back.usage.data.map((row: Answers) => [row.model, row.key_id]).sort()).toEqual([['gpt-4o-mini', calls.account.key_id], ['tts-1', calls.account.key_id]]);
    const spent = back.usage.data.reduce((sum: bigint, row: Answers) => sum + parseUsd(row.amount_usd), 0n);
    expect(spent).toBeGreaterThan(0n);
    // What is not spent is in the balance or held (the replica's credit grant is an ordinary hold).
    expect(parseUsd(back.account.balance_usd) + parseUsd(back.account.held_usd)).toBe(parseUsd('3.5') - spent);
    // The answers fit the document too (the types say what a field is, the schemas what it may hold).
    const checker = answerChecker(generatedDocument());
    checker.check('GET', '/admin/accounts/{id}/usage', 200, back.usage);
    checker.check('POST', '/v1/chat/completions', 200, calls.chat);
    checker.check('POST', '/v1/files', 200, calls.upload);
  }, 120_000);
});
