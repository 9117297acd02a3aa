import { describe, expect, it } from 'vitest';
import { modelAllowed } from '../../src/pipeline/key-models.js';

describe('allowed_models patterns (issue 33 item 2)', () => {
  it('allows every model without a list, and only the listed ids with one', () => {
    expect(modelAllowed(null, 'gpt-4o-mini')).toBe(true);
    expect(modelAllowed(undefined, 'gpt-4o-mini')).toBe(true);
    expect(modelAllowed(['gpt-4o-mini'], 'gpt-4o-mini')).toBe(true);
    expect(modelAllowed(['gpt-4o-mini'], 'gpt-4o')).toBe(false);
    expect(modelAllowed([], 'gpt-4o')).toBe(false);
  });

  it('matches `*` as any run of characters, anchored at both ends', () => {
    const list = ['gpt-4o*', '*-embedding-*', 'claude-*-4-5'];
    expect(modelAllowed(list, 'gpt-4o')).toBe(true);
    expect(modelAllowed(list, 'gpt-4o-mini')).toBe(true);
    expect(modelAllowed(list, 'text-embedding-3-small')).toBe(true);
    expect(modelAllowed(list, 'claude-haiku-4-5')).toBe(true);
    expect(modelAllowed(list, 'claude-haiku-4-5-20251001')).toBe(false);
    expect(modelAllowed(list, 'my-gpt-4o')).toBe(false);
    expect(modelAllowed(['*'], 'anything/at-all')).toBe(true);
  });

  it('takes every other character literally (a dot is a dot, not any character)', () => {
    expect(modelAllowed(['gpt-4.1'], 'gpt-4x1')).toBe(false);
    expect(modelAllowed(['gpt-4.1'], 'gpt-4.1')).toBe(true);
    expect(modelAllowed(['a+b(c)'], 'a+b(c)')).toBe(true);
    expect(modelAllowed(['a+b(c)'], 'aab(c)')).toBe(false);
  });
});
