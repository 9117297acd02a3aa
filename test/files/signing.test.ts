import { describe, expect, it } from 'vitest';
import { signUrl, verifySignedUrl, type SignedGrant } from '../../src/files/signing.js';

const secret = Buffer.from('0123456789abcdef0123456789abcdef');
const now = new Date('2026-03-01T12:00:00.000Z');
const expiresAt = new Date('2026-03-01T12:15:00.000Z');
const put: SignedGrant = { method: 'PUT', fileId: 'file-abc', contentType: 'application/pdf', byteSize: 1234 };

/** The query a server would parse from a signed URL (strings, as any query parser gives them). */
function queryOf(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url, 'http://gateway.test').searchParams);
}

describe('signUrl / verifySignedUrl', () => {
  it('signs and accepts a valid URL', () => {
    const url = signUrl('/v1/files/file-abc/upload', { ...put, expiresAt }, secret);
    expect(url).toMatch(/^\/v1\/files\/file-abc\/upload\?expires=\d+&signature=[A-Za-z0-9_-]{43}$/);
    const q = queryOf(url);
    expect(q.expires).toBe(String(expiresAt.getTime() / 1000));
    expect(verifySignedUrl(q, put, secret, now)).toBe('ok');
  });

  it('appends to a base that already has a query', () => {
    const url = signUrl('http://127.0.0.1:8080/v1/files/f?download=1', { method: 'GET', fileId: 'f', expiresAt }, secret);
    const q = queryOf(url);
    expect(q.download).toBe('1');
    expect(verifySignedUrl(q, { method: 'GET', fileId: 'f' }, secret, now)).toBe('ok');
  });

  it('expires at expiresAt, rounded down to the second', () => {
    const q = queryOf(signUrl('/u', { ...put, expiresAt: new Date(expiresAt.getTime() + 999) }, secret));
    expect(verifySignedUrl(q, put, secret, new Date(expiresAt.getTime() - 1))).toBe('ok');
    expect(verifySignedUrl(q, put, secret, expiresAt)).toBe('expired');
    expect(verifySignedUrl(q, put, secret, new Date(expiresAt.getTime() + 86_400_000))).toBe('expired');
  });

  it('refuses a tampered signature or expiry', () => {
    const q = queryOf(signUrl('/u', { ...put, expiresAt }, secret));
    const sig = q.signature!;
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    expect(verifySignedUrl({ ...q, signature: flipped }, put, secret, now)).toBe('invalid');
    // Pushing the expiry later breaks the MAC, even when the URL would otherwise have expired.
    expect(verifySignedUrl({ ...q, expires: String(Number(q.expires) + 3600) }, put, secret, now)).toBe('invalid');
    expect(verifySignedUrl(q, put, Buffer.from('another secret'), now)).toBe('invalid');
    const late = new Date(expiresAt.getTime() + 60_000);
    expect(verifySignedUrl({ ...q, signature: flipped }, put, secret, late)).toBe('invalid');
  });

  it('binds the method, the file, the size and the content type', () => {
    const q = queryOf(signUrl('/u', { ...put, expiresAt }, secret));
    expect(verifySignedUrl(q, { ...put, method: 'GET' }, secret, now)).toBe('invalid');
    expect(verifySignedUrl(q, { ...put, fileId: 'file-abd' }, secret, now)).toBe('invalid');
    expect(verifySignedUrl(q, { ...put, byteSize: 1235 }, secret, now)).toBe('invalid');
    expect(verifySignedUrl(q, { ...put, byteSize: undefined }, secret, now)).toBe('invalid');
    expect(verifySignedUrl(q, { ...put, contentType: 'text/html' }, secret, now)).toBe('invalid');
    expect(verifySignedUrl(q, { ...put, contentType: undefined }, secret, now)).toBe('invalid');
    // A read URL (no type, no size) is not an upload URL for the same file.
    const read = queryOf(signUrl('/u', { method: 'GET', fileId: 'file-abc', expiresAt }, secret));
    expect(verifySignedUrl(read, { method: 'GET', fileId: 'file-abc' }, secret, now)).toBe('ok');
    expect(verifySignedUrl(read, { method: 'PUT', fileId: 'file-abc' }, secret, now)).toBe('invalid');
  });

  it('refuses missing and garbage query values', () => {
    const q = queryOf(signUrl('/u', { ...put, expiresAt }, secret));
    const garbage: unknown[] = [undefined, null, '', 'abc', '-1', '1e10', '1.5', ' 1', '0x10', [q.expires], {}, true, Number.NaN, -5, 1.5];
    for (const expires of garbage) {
      expect(verifySignedUrl({ ...q, expires }, put, secret, now), String(expires)).toBe('invalid');
    }
    const badSigs: unknown[] = [undefined, null, '', 'short', `${q.signature}=`, `${q.signature}A`, q.signature!.replace(/./, '+'), [q.signature], 42];
    for (const signature of badSigs) {
      expect(verifySignedUrl({ ...q, signature }, put, secret, now), String(signature)).toBe('invalid');
    }
    expect(verifySignedUrl({}, put, secret, now)).toBe('invalid');
  });

  it('accepts an integer expiry (a query schema may coerce it)', () => {
    const q = queryOf(signUrl('/u', { ...put, expiresAt }, secret));
    expect(verifySignedUrl({ expires: Number(q.expires), signature: q.signature }, put, secret, now)).toBe('ok');
  });

  it('refuses grants that could forge a field boundary, and an empty secret', () => {
    expect(() => signUrl('/u', { ...put, fileId: 'a\nb', expiresAt }, secret)).toThrow();
    expect(() => signUrl('/u', { ...put, contentType: 'text/plain\n5', expiresAt }, secret)).toThrow();
    expect(() => signUrl('/u', { ...put, byteSize: -1, expiresAt }, secret)).toThrow();
    expect(() => signUrl('/u', { ...put, expiresAt: new Date(Number.NaN) }, secret)).toThrow();
    expect(() => signUrl('/u', { ...put, expiresAt }, Buffer.alloc(0))).toThrow();
    const q = queryOf(signUrl('/u', { ...put, expiresAt }, secret));
    expect(verifySignedUrl(q, { ...put, fileId: 'file-abc\n' }, secret, now)).toBe('invalid');
  });
});
