/**
 * The field a meter's source reads: the `param` of the 400 for a request whose input alone is more
 * than a token limit allows (spec 7 "400"), so that a client is told which field to shorten.
 */
import { describe, expect, it } from 'vitest';
import type { QuantitySource } from '../../src/generated/manifest-types.js';
import { compileSource, inputField } from '../../src/meters/sources.js';

const field = (raw: QuantitySource): string | null => inputField(compileSource(raw, 'routes/x.yaml', '/meter/x/reserve'));

describe('inputField', () => {
  it('names the first request field or file part a source reads', () => {
    expect(field({ request: '/input' })).toBe('input');
    expect(field({ request: '/options/max_seconds' })).toBe('options');
    expect(field({ counter: 'characters', of: ['/text'] })).toBe('text');
    expect(field({ counter: 'pages', of: ['files:/document'] })).toBe('document');
    expect(field({ counter: 'characters', of: ['response:/text', '/documents'] })).toBe('documents');
    expect(field({ constant: 10, plus: { request: '/n' } })).toBe('n');
  });

  it('is null for a constant or a figure from the answer', () => {
    expect(field({ constant: 1 })).toBeNull();
    expect(field({ upstream: '/usage/pages' })).toBeNull();
    expect(field({ header: 'x-metered-usage' })).toBeNull();
  });
});
