/**
 * Issue 9 point 1: "Tokens become one meter implementation among others; no stage of the pipeline
 * names tokens." The rule covers the pipeline's spine, the files that say what a request goes through:
 *  - src/pipeline/stages/*.ts: the seven stages;
 *  - src/pipeline/index.ts: their fixed order and the one error path;
 *  - src/pipeline/context.ts: the per-request state the stages share;
 *  - src/pipeline/stage.ts: the stage contract and the runtime it is compiled with;
 *  - src/pipeline/hold.ts: one hold's whole life.
 * There the meter's demand, its bill, the limiter's quantity and the reported usage are opaque (the
 * meter owns them, src/meters). Out of scope, on purpose: src/pipeline/forward/* hands the translator's
 * usage and the delivered text to the meter untouched (a pass-through of the wire format's own usage,
 * which may name it), and helper modules beside the spine name endpoints and vendors' terms they handle
 * (count_tokens in file-references.ts). Any spelling of the word counts: `token`, `Tokens`,
 * `inputTokens`, `tokenizer`, in code and in comments alike.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

const WORD = /token/i;

/** The spine's files, relative to the project root. */
async function spine(root: string): Promise<string[]> {
  const stages = (await readdir(join(root, 'src/pipeline/stages'))).filter((f) => f.endsWith('.ts')).map((f) => `src/pipeline/stages/${f}`);
  return [...stages, 'src/pipeline/index.ts', 'src/pipeline/context.ts', 'src/pipeline/stage.ts', 'src/pipeline/hold.ts'];
}

/** `file:line: text` for each line of `text` that names the word. */
function offenders(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (WORD.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('the pipeline spine', () => {
  it('names no tokens in the stages, their order, their state, their contract or the hold', async () => {
    const root = projectRoot();
    const files = await spine(root);
    // All seven stages are read (a moved folder must not empty the rule).
    expect(files.filter((f) => f.startsWith('src/pipeline/stages/'))).toHaveLength(7);
    const found: string[] = [];
    for (const file of files) found.push(...offenders(file, await readFile(join(root, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('catches the word in any spelling', () => {
    expect(offenders('x.ts', 'const a = 1;\nctx.limit.billedTokens = bill.limiterTokens;\n// counted with the tokenizer')).toEqual([
      'x.ts:2: ctx.limit.billedTokens = bill.limiterTokens;', 'x.ts:3: // counted with the tokenizer',
    ]);
  });
});
