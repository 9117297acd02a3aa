/**
 * The console's security rules (issue 13, "Tests that must exist and pass"), over plain HTTP: every
 * state-changing form needs its CSRF token; one account's session can neither read nor change another
 * account's keys or usage; a verification link works once; wrong passwords are throttled per address;
 * no key, password or session id reaches the log; the cookies carry their flags (Secure exactly when
 * src/console/cookies.ts says); a session is no API key and an API key opens no console page.
 * test/console/signup.test.ts covers the basic sign-up, sign-in and per-email throttling cases, and
 * test/console/operator.test.ts the operator's forms; this file covers the rest.
 */
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createLogger } from '../../src/observability/log.js';
import { ConsoleClient, csrfOf, signUp, verificationLink, type PageAnswer } from '../helpers/console.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const PASSWORD = 'a secret passphrase 7431';
/** The key a page shows once. */
const shownKey = (html: string): string => /id="new-key">([^<]+)</.exec(html)?.[1] ?? '';
/** The Set-Cookie line of `name` in an answer. */
const setCookie = (answer: PageAnswer, name: string): string => answer.setCookies.find((c) => c.startsWith(`${name}=`)) ?? '';

describe('console security', () => {
  let t: TestGateway;
  const clock = new ManualClock();
  /** Every line the gateway logged: its log function's and its request logger's (pino, JSON lines). */
  const lines: string[] = [];
  let alice: ConsoleClient;
  let bob: ConsoleClient;
  let aliceAccount = '';
  let aliceKey = '';
  let aliceKeyId = '';
  let aliceRequestId = '';

  beforeAll(async () => {
    t = await startTestGateway({ clock, log: (message, fields) => { lines.push(`${message} ${JSON.stringify(fields ?? {})}`); } });
    t.gw.runtime.logger = createLogger({ level: 'trace', destination: { write: (line: string) => { lines.push(line); } } });
    alice = new ConsoleClient(t.url);
    bob = new ConsoleClient(t.url);
    await signUp(alice, 'alice@example.com', PASSWORD);
    await signUp(bob, 'bob@example.com', PASSWORD);
    aliceAccount = await accountOf('alice@example.com');
    await t.gw.runtime.ledger.topUp(aliceAccount, 5_000_000_000n);
    const created = await alice.post('/console/keys', { name: 'alice-laptop' }, csrfOf((await alice.get('/console/keys')).text));
    aliceKey = shownKey(created.text);
    aliceKeyId = await liveKeyId(aliceAccount, 'alice-laptop');
    const completion = await chat(aliceKey);
    aliceRequestId = (await t.usage(aliceAccount, { limit: 1 })).data[0]!.requestId;
    expect(completion.object).toBe('chat.completion');
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  async function accountOf(email: string): Promise<string> {
    const [row] = await t.gw.db.query<{ account_id: string }>('SELECT account_id FROM console_users WHERE email = $1', [email]);
    return row!.account_id;
  }
  async function liveKeyId(accountId: string, name: string): Promise<string> {
    const [row] = await t.gw.db.query<{ id: string }>('SELECT id FROM api_keys WHERE account_id = $1 AND name = $2 AND revoked_at IS NULL', [accountId, name]);
    return row!.id;
  }
  async function keyCount(accountId: string): Promise<number> {
    return Number((await t.gw.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1', [accountId]))[0]!.n);
  }
  function chat(key: string): Promise<OpenAI.ChatCompletion> {
    return new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  }
  /** The status of an API call with these headers (GET /v1/models, or a chat completion). */
  async function apiStatus(path: '/v1/models' | '/v1/chat/completions', headers: Record<string, string>): Promise<number> {
    const chatBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    const res = await request(`${t.url}${path}`, path === '/v1/models'
      ? { headers }
      : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: chatBody });
    await res.body.text();
    return res.statusCode;
  }

  describe('CSRF', () => {
    it('refuses the key forms without the session\'s token (none, forged, another session\'s, the anonymous one), and changes nothing', async () => {
      const before = await keyCount(aliceAccount);
      const bobsToken = csrfOf((await bob.get('/console/keys')).text);
      const anonymous = alice.cookies.get('gw_csrf')!;
      expect(anonymous).toBeTruthy();
      for (const token of [undefined, 'forged', bobsToken, anonymous]) {
        expect((await alice.post('/console/keys', { name: 'sneaky' }, token)).status).toBe(403);
        expect((await alice.post(`/console/keys/${aliceKeyId}/rotate`, {}, token)).status).toBe(403);
        expect((await alice.post(`/console/keys/${aliceKeyId}/revoke`, {}, token)).status).toBe(403);
      }
      expect(await keyCount(aliceAccount)).toBe(before);
      expect(await liveKeyId(aliceAccount, 'alice-laptop')).toBe(aliceKeyId);
      expect(await apiStatus('/v1/models', { authorization: `Bearer ${aliceKey}` })).toBe(200);
    });

    it('refuses sign-out without the token, and the session stays open', async () => {
      expect((await alice.post('/console/signout', {})).status).toBe(403);
      expect((await alice.post('/console/signout', {}, 'forged')).status).toBe(403);
      expect(alice.cookies.has('gw_session')).toBe(true);
      const keys = await alice.get('/console/keys');
      expect(keys.status).toBe(200);
      expect(keys.text).toContain('alice@example.com');
    });

    it('refuses sign-up and sign-in with a token that belongs to another browser, or with no CSRF cookie', async () => {
      const victim = new ConsoleClient(t.url);
      await victim.get('/console');
      const attacker = new ConsoleClient(t.url);
      const attackersToken = csrfOf((await attacker.get('/console')).text);
      const signupsBefore = (await t.gw.db.query('SELECT 1 FROM console_signups')).length;
      expect((await victim.post('/console/signup', { email: 'planted@example.com', password: PASSWORD }, attackersToken)).status).toBe(403);
      expect((await victim.post('/console/signin', { email: 'alice@example.com', password: PASSWORD }, attackersToken)).status).toBe(403);
      const cookieless = new ConsoleClient(t.url);
      expect((await cookieless.post('/console/signup', { email: 'planted@example.com', password: PASSWORD }, attackersToken)).status).toBe(403);
      expect((await cookieless.post('/console/signin', { email: 'alice@example.com', password: PASSWORD }, attackersToken)).status).toBe(403);
      expect(victim.cookies.has('gw_session')).toBe(false);
      expect(cookieless.cookies.has('gw_session')).toBe(false);
      expect((await t.gw.db.query('SELECT 1 FROM console_signups')).length).toBe(signupsBefore);
    });
  });

  describe('one account, one session', () => {
    it('never lists another account\'s keys, and answers 404 to rotating or revoking them; the key keeps working', async () => {
      const keys = await bob.get('/console/keys');
      expect(keys.text).not.toContain(aliceKeyId);
      expect(keys.text).not.toContain('alice-laptop');
      const csrf = csrfOf(keys.text);
      const bobAccount = await accountOf('bob@example.com');
      const bobKeys = await keyCount(bobAccount);
      const rotate = await bob.post(`/console/keys/${aliceKeyId}/rotate`, {}, csrf);
      const revoke = await bob.post(`/console/keys/${aliceKeyId}/revoke`, {}, csrf);
      expect(rotate.status).toBe(404);
      expect(revoke.status).toBe(404);
      for (const answer of [rotate, revoke]) {
        expect(answer.text).not.toContain('alice-laptop');
        expect(answer.text).not.toMatch(/id="new-key"/);
      }
      expect(await keyCount(bobAccount)).toBe(bobKeys);
      expect(await liveKeyId(aliceAccount, 'alice-laptop')).toBe(aliceKeyId);
      await expect(chat(aliceKey)).resolves.toMatchObject({ object: 'chat.completion' });
    });

    it('never shows another account\'s usage rows: not on the page, not filtered by their key, not in the CSV', async () => {
      const rowIds = (await t.usage(aliceAccount, { limit: 100 })).data.map((r) => r.id);
      expect(rowIds.length).toBeGreaterThan(0);
      // Alice sees her own row (so the checks below could fail).
      expect((await alice.get('/console/usage')).text).toContain(aliceRequestId);
      for (const path of ['/console/usage', `/console/usage?key=${aliceKeyId}`, '/console/usage?model=gpt-4o-mini', '/console/usage.csv', `/console/usage.csv?key=${aliceKeyId}`]) {
        const answer = await bob.get(path);
        expect(answer.status).toBe(200);
        expect(answer.text).not.toContain(aliceRequestId);
        for (const id of rowIds) expect(answer.text).not.toContain(id);
        expect(answer.text).not.toContain('alice-laptop');
      }
      expect((await bob.get(`/console/usage?key=${aliceKeyId}`)).text).toContain('No usage rows match');
      expect((await bob.get(`/console/usage.csv?key=${aliceKeyId}`)).text.trim().split('\n')).toHaveLength(1);
    });
  });

  describe('verification links', () => {
    it('works once: a second use signs nobody in, and a second pending link for the email creates nothing', async () => {
      const first = new ConsoleClient(t.url);
      const second = new ConsoleClient(t.url);
      for (const client of [first, second]) {
        expect((await client.post('/console/signup', { email: 'once@example.com', password: PASSWORD }, csrfOf((await client.get('/console')).text))).status).toBe(200);
      }
      const outbox = await request(`${t.url}/admin/outbox`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const links = ((await outbox.body.json()) as { data: Array<{ to: string; text: string }> }).data
        .filter((m) => m.to === 'once@example.com').map((m) => new URL(/(https?:\/\/\S+\/console\/verify\?token=\S+)/.exec(m.text)![1]!));
      expect(links).toHaveLength(2);
      const [one, two] = links as [URL, URL];
      expect(new URL(await verificationLink(t.url, 'once@example.com')).href).toBe(two.href);
      const tampered = `${one.pathname}?token=${one.searchParams.get('token')!.slice(0, -1)}${one.searchParams.get('token')!.endsWith('A') ? 'B' : 'A'}`;
      const tamperedAnswer = await new ConsoleClient(t.url).get(tampered);
      expect(tamperedAnswer.status).toBe(400);
      expect(setCookie(tamperedAnswer, 'gw_session')).toBe('');

      const used = await first.get(one.pathname + one.search);
      expect(used.status).toBe(303);
      expect(setCookie(used, 'gw_session')).not.toBe('');
      const accounts = (await t.gw.db.query("SELECT 1 FROM console_users WHERE email = 'once@example.com'")).length;
      expect(accounts).toBe(1);

      const replay = new ConsoleClient(t.url);
      const again = await replay.get(one.pathname + one.search);
      expect(again.status).toBe(400);
      expect(setCookie(again, 'gw_session')).toBe('');
      expect((await replay.get('/console/keys')).headers.location).toBe('/console');

      const late = await second.get(two.pathname + two.search);
      expect(late.status).toBe(400);
      expect(late.text).toContain('already exists');
      expect(setCookie(late, 'gw_session')).toBe('');
      expect((await t.gw.db.query("SELECT 1 FROM console_users WHERE email = 'once@example.com'")).length).toBe(1);
    });
  });

  describe('cookies', () => {
    /** The console's cookie lines for one request's headers: the CSRF cookie of GET /console and the session cookie of a sign-in. */
    async function cookiesWith(headers: Record<string, string>): Promise<{ csrf: string; session: string; signout: string }> {
      const client = new ConsoleClient(t.url, headers);
      const home = await client.get('/console');
      const signin = await client.post('/console/signin', { email: 'alice@example.com', password: PASSWORD }, csrfOf(home.text));
      expect(signin.status).toBe(303);
      const out = await client.post('/console/signout', {}, csrfOf((await client.get('/console/keys')).text));
      return { csrf: setCookie(home, 'gw_csrf'), session: setCookie(signin, 'gw_session'), signout: setCookie(out, 'gw_session') };
    }

    it('carries HttpOnly, SameSite=Lax and Path=/console, without Secure on plain HTTP to a loopback host', async () => {
      const port = new URL(t.url).port;
      for (const host of [undefined, `localhost:${port}`, `[::1]:${port}`, `127.0.0.5:${port}`]) {
        const { csrf, session, signout } = await cookiesWith(host ? { host } : {});
        for (const line of [csrf, session, signout]) {
          expect(line).toMatch(/; Path=\/console(;|$)/);
          expect(line).toMatch(/; HttpOnly(;|$)/);
          expect(line).toMatch(/; SameSite=Lax(;|$)/);
          expect(line).not.toMatch(/Secure/i);
        }
        expect(session).toMatch(/; Max-Age=604800(;|$)/); // the default session lifetime, 7 days
        expect(signout).toMatch(/^gw_session=; .*Max-Age=0(;|$)/);
      }
    });

    it('adds Secure when a loopback proxy says https, or when the Host is not a loopback name', async () => {
      const port = new URL(t.url).port;
      const cases: Array<Record<string, string>> = [
        { 'x-forwarded-proto': 'https' },
        { 'x-forwarded-proto': 'https, http' },
        { host: 'console.example.com' },
        { host: `console.example.com:${port}`, 'x-forwarded-proto': 'http' },
        { host: `127.0.0.1.example.com:${port}` },
      ];
      for (const headers of cases) {
        const { csrf, session, signout } = await cookiesWith(headers);
        for (const line of [csrf, session, signout]) {
          expect(line, JSON.stringify(headers)).toMatch(/; Secure(;|$)/);
          expect(line).toMatch(/; HttpOnly; SameSite=Lax/);
          expect(line).toMatch(/; Path=\/console(;|$)/);
        }
      }
      // A forwarded protocol that is not https leaves a loopback request without Secure.
      expect((await cookiesWith({ 'x-forwarded-proto': 'http' })).session).not.toMatch(/Secure/i);
    });
  });

  describe('sessions and keys do not mix', () => {
    it('refuses a console session as an API key, in every header style', async () => {
      const sessionId = alice.cookies.get('gw_session')!;
      expect(sessionId).toBeTruthy();
      const operator = new ConsoleClient(t.url);
      await operator.post('/console/operator/signin', { token: ADMIN_TOKEN }, csrfOf((await operator.get('/console/operator')).text));
      const operatorSession = operator.cookies.get('gw_session')!;
      expect(operatorSession).toBeTruthy();
      for (const id of [sessionId, operatorSession]) {
        for (const path of ['/v1/models', '/v1/chat/completions'] as const) {
          expect(await apiStatus(path, { authorization: `Bearer ${id}` })).toBe(401);
          expect(await apiStatus(path, { 'x-api-key': id })).toBe(401);
          expect(await apiStatus(path, { cookie: `gw_session=${encodeURIComponent(id)}` })).toBe(401);
        }
        const admin = await request(`${t.url}/admin/reconcile`, { headers: { authorization: `Bearer ${id}` } });
        await admin.body.text();
        expect(admin.statusCode).toBe(401);
      }
      // The same key works (so a 401 above is about the credential, not the route).
      expect(await apiStatus('/v1/models', { authorization: `Bearer ${aliceKey}` })).toBe(200);
    });

    it('never opens a console page for an API key or the admin token', async () => {
      const anonymous = new ConsoleClient(t.url);
      for (const headers of [{ authorization: `Bearer ${aliceKey}` }, { 'x-api-key': aliceKey }] as Array<Record<string, string>>) {
        for (const path of ['/console/keys', '/console/usage', '/console/usage.csv', '/console/catalogue']) {
          const answer = await anonymous.get(path, headers);
          expect(answer.status).toBe(303);
          expect(answer.headers.location).toBe('/console');
        }
        const post = await anonymous.send('POST', '/console/keys', { name: 'via-key' }, headers);
        expect(post.status).toBe(401);
      }
      const operatorPage = await anonymous.get('/console/operator', { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(operatorPage.status).toBe(200);
      expect(operatorPage.text).toContain('Operator sign-in');
      expect(operatorPage.text).not.toContain(aliceAccount);
      expect((await anonymous.get(`/console/operator/accounts/${aliceAccount}`, { authorization: `Bearer ${ADMIN_TOKEN}` })).headers.location).toBe('/console/operator');
    });
  });

  describe('logs', () => {
    it('never hold a key, a password or a session id', async () => {
      const client = new ConsoleClient(t.url);
      await signUp(client, 'logs@example.com', PASSWORD);
      const csrf = csrfOf((await client.get('/console/keys')).text);
      const first = shownKey((await client.post('/console/keys', { name: 'logged' }, csrf)).text);
      const accountId = await accountOf('logs@example.com');
      await t.gw.runtime.ledger.topUp(accountId, 1_000_000_000n);
      await chat(first);
      const rotated = shownKey((await client.post(`/console/keys/${await liveKeyId(accountId, 'logged')}/rotate`, {}, csrf)).text);
      await chat(rotated);
      await expect(chat(first)).rejects.toMatchObject({ status: 401 });
      const again = new ConsoleClient(t.url);
      expect((await again.post('/console/signin', { email: 'logs@example.com', password: PASSWORD }, csrfOf((await again.get('/console')).text))).status).toBe(303);
      const wrong = new ConsoleClient(t.url);
      expect((await wrong.post('/console/signin', { email: 'logs@example.com', password: `${PASSWORD}!` }, csrfOf((await wrong.get('/console')).text))).status).toBe(401);

      const log = lines.join('\n');
      // The capture works: both the console's lines and the request logger's are in it.
      expect(log).toContain('console key created');
      expect(log).toContain('console key rotated');
      expect(log).toContain('"msg":"request"');
      for (const secret of [first, rotated, aliceKey, PASSWORD, client.cookies.get('gw_session')!, again.cookies.get('gw_session')!, alice.cookies.get('gw_session')!]) {
        expect(secret.length).toBeGreaterThan(10);
        expect(log).not.toContain(secret);
      }
      expect(log).not.toContain(first.slice(3, 20)); // not even the key's random part
    });
  });

  // Last: it throttles this address for the window, and moves the clock past it.
  describe('sign-in throttling', () => {
    it('answers 429 with Retry-After once an address has 20 failures, even for the right password; other addresses and the end of the window go on', async () => {
      clock.advance(900_000 + 1000); // a fresh window: failures of the tests above are forgotten
      const client = new ConsoleClient(t.url);
      const csrf = csrfOf((await client.get('/console')).text);
      for (let i = 0; i < 20; i++) {
        // A different email each time: the per-email limit (5) is never reached, only the address's (20).
        expect((await client.post('/console/signin', { email: `guess${i}@example.com`, password: 'wrong password!' }, csrf)).status).toBe(401);
      }
      const throttled = await client.post('/console/signin', { email: 'alice@example.com', password: PASSWORD }, csrf);
      expect(throttled.status).toBe(429);
      const wait = Number(throttled.headers['retry-after']);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(900);
      expect(throttled.text).toContain('Too many failed sign-ins');
      expect(setCookie(throttled, 'gw_session')).toBe('');

      // Another loopback address (127.0.0.2) is counted on its own.
      const other = new Agent({ localAddress: '127.0.0.2' });
      try {
        const res = await request(`${t.url}/console/signin`, {
          method: 'POST', dispatcher: other,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `gw_csrf=${client.cookies.get('gw_csrf')!}` },
          body: new URLSearchParams({ csrf, email: 'alice@example.com', password: PASSWORD }).toString(),
        });
        await res.body.text();
        expect(res.statusCode).toBe(303);
      } finally {
        await other.close();
      }

      clock.advance(wait * 1000);
      expect((await client.post('/console/signin', { email: 'alice@example.com', password: PASSWORD }, csrf)).status).toBe(303);
    });
  });
});
