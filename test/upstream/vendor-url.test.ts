/**
 * The host rule for URLs a vendor's answer names (src/upstream/vendor-url.ts): the base URL's own
 * origin always; otherwise https on the default port, no userinfo, on a declared host (`*.` any
 * subdomain). Everything else is a 502 before any connection.
 */
import { describe, expect, it } from 'vitest';
import { allowedVendorUrl, hostMatches } from '../../src/upstream/vendor-url.js';

const BASE = 'https://api.bfl.ai';
const HOSTS = ['*.bfl.ai'];

describe('hostMatches', () => {
  it('matches exact hosts and any depth of subdomain under a `*.` pattern, never the bare suffix or a lookalike', () => {
    expect(hostMatches('api.bfl.ai', 'api.bfl.ai')).toBe(true);
    expect(hostMatches('api.us1.bfl.ai', '*.bfl.ai')).toBe(true);
    expect(hostMatches('delivery-eu1.bfl.ai', '*.bfl.ai')).toBe(true);
    expect(hostMatches('bfl.ai', '*.bfl.ai')).toBe(false);
    expect(hostMatches('evilbfl.ai', '*.bfl.ai')).toBe(false);
    expect(hostMatches('bfl.ai.evil.com', '*.bfl.ai')).toBe(false);
    expect(hostMatches('api.bfl.ai', 'bfl.ai')).toBe(false);
  });
});

describe('allowedVendorUrl', () => {
  const allowed = (text: unknown, base = BASE, hosts = HOSTS) => allowedVendorUrl(text, base, hosts, 'job location');

  it('admits the base URL origin (any scheme: the simulator on loopback), relative URLs, and declared https hosts', () => {
    expect(allowed('https://api.bfl.ai/v1/get_result?id=1').href).toBe('https://api.bfl.ai/v1/get_result?id=1');
    expect(allowed('/v1/get_result?id=2').href).toBe('https://api.bfl.ai/v1/get_result?id=2');
    expect(allowed('https://api.us1.bfl.ai/v1/get_result?id=3').hostname).toBe('api.us1.bfl.ai');
    expect(allowed('https://API.EU1.BFL.AI/v1/get_result?id=4').hostname).toBe('api.eu1.bfl.ai');
    expect(allowed('http://127.0.0.1:8089/v1/get_result?id=5', 'http://127.0.0.1:8089', []).port).toBe('8089');
  });

  it('refuses other hosts, plain http, other ports and userinfo on declared hosts, and other loopback ports', () => {
    const refused = [
      'https://evil.example/v1/get_result', 'http://api.us1.bfl.ai/v1/get_result', 'https://api.us1.bfl.ai:8443/v1/get_result',
      'https://user:pw@api.us1.bfl.ai/v1/get_result', 'https://bfl.ai/v1/get_result', 'https://bfl.ai.evil.example/x', 'https://169.254.169.254/latest',
    ];
    for (const text of refused) expect(() => allowed(text), text).toThrow('The upstream provider sent a job location on another host.');
    expect(() => allowed('http://127.0.0.1:9/x', 'http://127.0.0.1:8089', ['127.0.0.1'])).toThrow('on another host');
  });

  it('refuses a missing or unparsable location with a 502', () => {
    for (const text of [undefined, null, '', 42]) expect(() => allowed(text)).toThrow(expect.objectContaining({ code: 'upstream_error', status: 502, message: 'The upstream provider sent no job location.' }));
    expect(() => allowed('http://[::1')).toThrow('an invalid job location');
  });
});
