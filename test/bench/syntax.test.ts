/**
 * `npm run bench` is run by hand, not by the suite: its scripts must at least parse, so that a slip
 * in one (a stray backtick in the report's text) fails here rather than at the next measurement.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BENCH = join(import.meta.dirname, '../../bench');
const scripts = [...readdirSync(BENCH).map((f) => join(BENCH, f)), ...readdirSync(join(BENCH, 'lib')).map((f) => join(BENCH, 'lib', f))]
  .filter((f) => f.endsWith('.mjs'));

describe('bench scripts', () => {
  it('finds the scripts', () => {
    expect(scripts.map((f) => f.slice(BENCH.length + 1))).toEqual(expect.arrayContaining(['run.mjs', 'floor-proxy.mjs', 'lib/report.mjs']));
  });

  for (const file of scripts) {
    it(`parses ${file.slice(BENCH.length + 1)}`, () => {
      const result = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    });
  }
});
