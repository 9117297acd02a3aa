/**
 * Which meters know their settled quantity once the upstream's status and headers are in (issue 9
 * point 3: a binary answer is then streamed through, else buffered). Decided at compile time from the
 * declared sources, with no route or provider names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { clientFormat } from '../../src/formats/index.js';
import type { QuantitySource, RouteManifest } from '../../src/generated/manifest-types.js';
import { compileMeters } from '../../src/meters/index.js';
import { knownAtHeaders } from '../../src/meters/quantity-meter.js';
import { compileSource } from '../../src/meters/sources.js';
import { projectRoot } from '../../src/paths.js';

const known = (raw: QuantitySource): boolean => knownAtHeaders(compileSource(raw, 'routes/x.yaml', '/meter/x/source'));

function route(id: string): RouteManifest {
  return parse(readFileSync(join(projectRoot(), 'routes', `${id}.yaml`), 'utf8')) as RouteManifest;
}

describe('knownAtHeaders', () => {
  it('is true for the request, a constant, a counter over the request or its files, an upstream header', () => {
    expect(known({ request: '/duration_seconds' })).toBe(true);
    expect(known({ constant: 1 })).toBe(true);
    expect(known({ counter: 'characters', of: ['/input'] })).toBe(true);
    expect(known({ counter: 'pages', of: ['files:/document'] })).toBe(true);
    expect(known({ header: 'x-metered-usage' })).toBe(true);
    expect(known({ header: 'x-metered-usage', plus: { constant: 2 }, times: '/to' })).toBe(true);
  });

  it('is false for anything read from the answer body or the translator', () => {
    expect(known({ upstream: '/usage/pages' })).toBe(false);
    expect(known({ translator: 'characters' })).toBe(false);
    expect(known({ counter: 'characters', of: ['/input', 'response:/text'] })).toBe(false);
    expect(known({ header: 'x-metered-usage', plus: { upstream: '/extra' } })).toBe(false);
  });

  it('is set on the compiled meters of the binary routes, and not on a token meter', () => {
    const format = clientFormat('native-json');
    for (const [id, unit] of [['speech', 'character'], ['sound-effects', 'second'], ['documents-translate', 'character'], ['documents-redact-pii', 'page']] as const) {
      expect(compileMeters(route(id), format, `routes/${id}.yaml`).get(unit)?.knownAtHeaders, id).toBe(true);
    }
    const chat = route('chat-completions');
    expect(compileMeters(chat, clientFormat(chat.format), 'routes/chat-completions.yaml').get('token')?.knownAtHeaders).toBeFalsy();
    const pages = route('ocr');
    expect(compileMeters(pages, clientFormat(pages.format), 'routes/ocr.yaml').get('page')?.knownAtHeaders).toBe(false);
  });
});
