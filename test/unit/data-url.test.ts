/** The one data URL reader (src/data-url.ts): RFC 2397's parts, and null for anything that is not one. */
import { describe, expect, it } from 'vitest';
import { parseDataUrl } from '../../src/data-url.js';

describe('parseDataUrl', () => {
  it('splits the media type (lower-cased), the base64 flag and the payload', () => {
    expect(parseDataUrl('data:image/PNG;base64,aGk=')).toEqual({ mediaType: 'image/png', base64: true, payload: 'aGk=' });
    expect(parseDataUrl('DATA:application/pdf;name=a.pdf;BASE64,JVBE')).toEqual({ mediaType: 'application/pdf', base64: true, payload: 'JVBE' });
    expect(parseDataUrl('data:;base64,aGk')).toEqual({ mediaType: '', base64: true, payload: 'aGk' });
    // Not base64: percent-encoded text, or `base64` as the type rather than the last parameter.
    expect(parseDataUrl('data:text/plain,hi%20there')).toEqual({ mediaType: 'text/plain', base64: false, payload: 'hi%20there' });
    expect(parseDataUrl('data:base64,aGk=')).toMatchObject({ mediaType: 'base64', base64: false });
    // The payload is everything after the first comma, as sent.
    expect(parseDataUrl('data:image/png;base64,a,b')?.payload).toBe('a,b');
  });

  it('is null for what is not a data URL', () => {
    expect([parseDataUrl('https://example.com/a.png'), parseDataUrl('data:image/png;base64'), parseDataUrl('aGk='), parseDataUrl('data:')]).toEqual([null, null, null, null]);
  });
});
