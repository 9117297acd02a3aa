/**
 * The google-service-account auth scheme (issue 32 item 3) against the simulator's token endpoint,
 * which checks the JWT's RS256 signature, audience, scope and times: a token fetched and cached, a
 * stale one refreshed once for many waiting callers, failures as clean 502s that nobody caches.
 * Time is a hand-moved clock; the token endpoint's answers are held (POST /__sim/release) to keep
 * callers waiting, so nothing depends on timing.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/cancel.js';
import { GatewayError } from '../../src/errors.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { TokenUnavailable } from '../../src/upstream/token-unavailable.js';
import { AccessTokens, readServiceAccountKey, REFRESH_MARGIN_MS, signedAssertion } from '../../src/upstream/google-service-account.js';
import { createServiceAccount, type TestServiceAccount } from '../helpers/service-account.js';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Waits until the simulator has received `n` token exchanges (polling its log: no timing involved). */
async function tokenRequestsReach(account: TestServiceAccount, n: number): Promise<void> {
  while ((await account.tokenRequests()) < n) await new Promise((resolve) => setImmediate(resolve));
}

async function release(sim: Simulator): Promise<number> {
  const res = await request(`${sim.url}/__sim/release`, { method: 'POST' });
  return ((await res.body.json()) as { released: number }).released;
}

describe('AccessTokens (google-service-account)', () => {
  let sim: Simulator;
  let account: TestServiceAccount;
  let now = Date.now();
  const clock = () => now;

  beforeAll(async () => {
    sim = await startSimulator();
    account = await createServiceAccount(sim.url);
  });
  afterEach(async () => {
    await request(`${sim.url}/__sim/faults`, { method: 'DELETE' }).then((r) => r.body.text());
    await account.configure({ expiresIn: 3600, hold: false });
  });
  afterAll(async () => { await account?.dispose(); await sim?.close(); });

  it('signs an RS256 JWT for the scope with aud = token_uri and an hour of life', async () => {
    const key = await readServiceAccountKey(account.path);
    const [header, claims] = signedAssertion(key, SCOPE, 1_700_000_000_500).split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'fake-key-id' });
    expect(claims).toEqual({ iss: account.clientEmail, scope: SCOPE, aud: `${sim.url}/token`, iat: 1_700_000_000, exp: 1_700_003_600 });
  });

  it('fetches a token the endpoint accepts, then serves it from the cache until shortly before it expires', async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    const before = await account.tokenRequests();
    const first = await tokens.token(account.path);
    expect(first).toMatch(/^ya29\.sim-/);
    now += 3600_000 - REFRESH_MARGIN_MS - 1;
    expect(await tokens.token(account.path)).toBe(first);
    expect(await account.tokenRequests()).toBe(before + 1);
    now += 1; // within the margin: refreshed
    const second = await tokens.token(account.path);
    expect(second).not.toBe(first);
    expect(await account.tokenRequests()).toBe(before + 2);
  });

  it('refreshes an expired token once for many concurrent callers, each waiting once', async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    const old = await tokens.token(account.path);
    now += 3600_000; // expired
    await account.configure({ expiresIn: 3600, hold: true });
    const before = await account.tokenRequests();
    const waiting = Array.from({ length: 8 }, () => tokens.token(account.path));
    await tokenRequestsReach(account, before + 1);
    expect(await release(sim)).toBe(1);
    const got = await Promise.all(waiting);
    expect(new Set(got).size).toBe(1);
    expect(got[0]).not.toBe(old);
    expect(await account.tokenRequests()).toBe(before + 1);
  });

  it('a token that is stale on arrival still serves the callers that waited for it (nobody waits twice)', async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    await account.configure({ expiresIn: 30, hold: true }); // shorter than the margin: stale at once
    const before = await account.tokenRequests();
    const waiting = [tokens.token(account.path), tokens.token(account.path)];
    await tokenRequestsReach(account, before + 1);
    await release(sim);
    const [a, b] = await Promise.all(waiting);
    expect(a).toBe(b);
    expect(await account.tokenRequests()).toBe(before + 1);
  });

  it('forgets a refused token, but not a newer one cached since', async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    const refused = await tokens.token(account.path);
    tokens.forget(account.path, refused);
    const fresh = await tokens.token(account.path);
    expect(fresh).not.toBe(refused);
    tokens.forget(account.path, refused); // a late report about the old token
    expect(await tokens.token(account.path)).toBe(fresh);
  });

  it('a token endpoint failure is a 502 for every waiter, not cached: the next call fetches again', async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    await request(`${sim.url}/__sim/faults`, { method: 'POST', body: JSON.stringify({ model: 'google-oauth-token', fault: { status: 503, times: 1 } }) }).then((r) => r.body.text());
    const results = await Promise.allSettled([tokens.token(account.path), tokens.token(account.path)]);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const error = (r as PromiseRejectedResult).reason as GatewayError;
      expect(error).toBeInstanceOf(GatewayError);
      // The attempt loop's sign that no token could be had (src/upstream/client.ts: a failed attempt, not the request's end).
      expect(error).toBeInstanceOf(TokenUnavailable);
      expect([error.code, error.status]).toEqual(['upstream_error', 502]);
      expect(error.message).toContain('answered 503');
      // The endpoint's own failure may pass: its deployment may be asked again (a `token` attempt failure).
      expect((error as TokenUnavailable).transient).toBe(true);
    }
    expect(await tokens.token(account.path)).toMatch(/^ya29\.sim-/);
  });

  it('refuses an assertion signed by another key: the endpoint says invalid_grant, the caller gets a 502', async () => {
    const other = await createServiceAccount(sim.url);
    try {
      // The account's email with the other key pair's public key: the signature no longer verifies.
      await request(`${sim.url}/__sim/google/accounts`, { method: 'POST', body: JSON.stringify({ client_email: account.clientEmail, public_key: other.publicKey }) }).then((r) => r.body.text());
      // A refused grant will not pass by asking again (a `token_refused` attempt failure: the next deployment).
      await expect(new AccessTokens(SCOPE, { now: clock }).token(account.path)).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('answered 400 invalid_grant'), transient: false });
    } finally {
      await other.dispose();
    }
  });

  it('refuses a scope the endpoint does not grant', async () => {
    await expect(new AccessTokens('https://www.googleapis.com/auth/not-this-one', { now: clock }).token(account.path)).rejects.toMatchObject({ code: 'upstream_error' });
  });

  it('a missing or malformed key file, or an unreachable endpoint, is a 502 naming no secret', async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    await expect(tokens.token('/nonexistent/fake-key.json')).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('could not be read') });
    await expect(tokens.token('/nonexistent/fake-key.json')).rejects.toBeInstanceOf(TokenUnavailable);
    await expect(tokens.token('/nonexistent/fake-key.json')).rejects.toMatchObject({ transient: false });
    const broken = `${account.path}.broken.json`;
    await writeFile(broken, JSON.stringify({ client_email: 'x@fake-project.iam.gserviceaccount.com' }));
    await expect(tokens.token(broken)).rejects.toMatchObject({ message: expect.stringContaining('lacks') });
    const closed = await startSimulator();
    const gone = await createServiceAccount(closed.url);
    await closed.close();
    try {
      await expect(tokens.token(gone.path)).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('could not be reached'), transient: true });
    } finally { await gone.dispose(); }
  });

  it("a caller's abort ends its own wait only: the fetch goes on for the others", async () => {
    const tokens = new AccessTokens(SCOPE, { now: clock });
    await account.configure({ expiresIn: 3600, hold: true });
    const before = await account.tokenRequests();
    const leaving = new Cancellation();
    const left = tokens.token(account.path, leaving);
    const staying = tokens.token(account.path);
    await tokenRequestsReach(account, before + 1);
    leaving.abort(new Error('client gone'));
    await expect(left).rejects.toThrow('client gone');
    await release(sim);
    expect(await staying).toMatch(/^ya29\.sim-/);
  });
});
