/** The URL rules of the SSRF-safe fetcher (issue 11 item 7): scheme, userinfo, allow list, IP literals. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { allowHostKey, allowHostSet, MAX_URL_LENGTH, parseUrlInput } from '../../../src/upstream/fetch/index.js';

const none = allowHostSet([]);

function refusal(raw: string, allow = none): GatewayError {
  try { parseUrlInput(raw, 'image', allow); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error(`${raw} was accepted`);
}

describe('parseUrlInput', () => {
  it('accepts https URLs with any port, drops the fragment, leaves names for the resolver', () => {
    const target = parseUrlInput('https://Images.Example.COM:8443/a.png?x=1#frag', 'image', none);
    expect(target).toMatchObject({ hostKey: 'images.example.com:8443', allowed: false, literal: null });
    expect(target.url.href).toBe('https://images.example.com:8443/a.png?x=1');
    expect(parseUrlInput('https://8.8.8.8/x', 'image', none).literal).toBe('8.8.8.8');
    expect(parseUrlInput('https://[2606:4700::1111]/x', 'image', none)).toMatchObject({ literal: '2606:4700::1111', hostKey: '[2606:4700::1111]:443' });
  });

  it.each([
    ['file:///etc/passwd', 'only https URLs are accepted, not file:'],
    ['gopher://127.0.0.1:70/_x', 'only https URLs are accepted, not gopher:'],
    ['data:image/png;base64,AAAA', 'only https URLs are accepted, not data:'],
    ['ftp://example.com/a.png', 'only https URLs are accepted, not ftp:'],
    ['javascript:alert(1)', 'only https URLs are accepted, not javascript:'],
    ['ws://example.com/', 'only https URLs are accepted, not ws:'],
    ['http://example.com/a.png', 'only https URLs are accepted'],
    ['https://user:pass@example.com/', 'URLs carrying credentials (user:password@) are not accepted'],
    ['https://example.com:443@127.0.0.1/', 'URLs carrying credentials (user:password@) are not accepted'],
    ['https://:@example.com/', 'URLs carrying credentials (user:password@) are not accepted'],
    ['https://@example.com/', 'URLs carrying credentials (user:password@) are not accepted'],
    ['/relative/path.png', 'not a valid absolute URL'],
    ['https://[fe80::1%25eth0]/', 'not a valid absolute URL'],
    ['https://127.0.0.1/', "the URL's host is a loopback address"],
    ['https://0300.0250.0.1/', "the URL's host is a private address"],
    ['https://[::ffff:a9fe:a9fe]/', "the URL's host is the cloud metadata address (link-local) (IPv4-mapped)"],
    [`https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`, `the URL is longer than ${MAX_URL_LENGTH} characters`],
  ])('refuses %s', (raw, problem) => {
    const error = refusal(raw);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, message: `image: ${problem}`, extra: { param: 'image' } });
  });

  it('an allow-listed host:port skips the address rules and may use http; another port or spelling does not', () => {
    const allow = allowHostSet(['127.0.0.1:9000', 'LocalHost:8080', '[::1]:443']);
    expect(parseUrlInput('http://127.0.0.1:9000/a', 'image', allow)).toMatchObject({ allowed: true, literal: '127.0.0.1' });
    expect(parseUrlInput('http://2130706433:9000/a', 'image', allow).allowed).toBe(true);
    expect(parseUrlInput('http://localhost:8080/', 'image', allow).allowed).toBe(true);
    expect(parseUrlInput('https://[0:0::1]/', 'image', allow).allowed).toBe(true);
    expect(refusal('http://127.0.0.1:9001/', allow).message).toBe('image: only https URLs are accepted');
    expect(refusal('https://127.0.0.1:9001/', allow).message).toBe("image: the URL's host is a loopback address");
    expect(refusal('https://[::ffff:127.0.0.1]:9000/', allow).message).toBe("image: the URL's host is a loopback address (IPv4-mapped)");
    expect(refusal('http://user@127.0.0.1:9000/', allow).message).toBe('image: URLs carrying credentials (user:password@) are not accepted');
  });
});

describe('allowHostKey', () => {
  it('normalises entries as URL parsing does', () => {
    expect(allowHostKey('127.0.0.1:9000')).toBe('127.0.0.1:9000');
    expect(allowHostKey('0x7f000001:9000')).toBe('127.0.0.1:9000');
    expect(allowHostKey('Images.Example.com:443')).toBe('images.example.com:443');
    expect(allowHostKey('[0:0:0:0:0:0:0:1]:80')).toBe('[::1]:80');
  });

  it.each(['127.0.0.1', 'example.com', 'user@host:1', 'host:1/path', 'host:99999', 'ho st:1', 'host:1#x'])('matches nothing for %j', (entry) => {
    expect(allowHostKey(entry)).toBeNull();
  });
});
