/**
 * Sign-up, verification, sign-in and sign-out (issue 13 item 1) over real HTTP: the account exists only
 * once the emailed link is followed, the link works once, cookies carry the flags, CSRF is required,
 * wrong passwords are throttled, and neither password nor link reaches the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ConsoleClient, csrfOf, signUp, verificationLink } from '../helpers/console.js';

describe('console sign-up and sign-in', () => {
  let t: TestGateway;
  const clock = new ManualClock();
  const lines: string[] = [];

  beforeAll(async () => {
    t = await startTestGateway({ clock, log: (message, fields) => { lines.push(`${message} ${JSON.stringify(fields ?? {})}`); } });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  const accounts = async (): Promise<number> => Number((await t.gw.db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts'))[0]!.n);

  it('creates the account only when the emailed link is followed, once, at a zero balance', async () => {
    const client = new ConsoleClient(t.url);
    const home = await client.get('/console');
    expect(home.status).toBe(200);
    expect(home.text).toContain('Create an account');
    const csrfCookie = home.setCookies.find((c) => c.startsWith('gw_csrf='))!;
    expect(csrfCookie).toMatch(/HttpOnly/);
    expect(csrfCookie).toMatch(/SameSite=Lax/);
    expect(csrfCookie).not.toMatch(/Secure/); // plain HTTP on loopback
    const before = await accounts();
    const answer = await client.post('/console/signup', { email: 'Ada@Example.com', password: 'a long passphrase' }, csrfOf(home.text));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('ada@example.com');
    expect(await accounts()).toBe(before);
    const link = new URL(await verificationLink(t.url, 'ada@example.com'));
    const verified = await client.get(link.pathname + link.search);
    expect(verified.status).toBe(303);
    expect(verified.headers.location).toBe('/console/keys?welcome=1');
    const session = verified.setCookies.find((c) => c.startsWith('gw_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
    expect(session).toMatch(/Path=\/console/);
    expect(await accounts()).toBe(before + 1);
    const [user] = await t.gw.db.query<{ account_id: string }>("SELECT account_id FROM console_users WHERE email = 'ada@example.com'");
    expect((await t.settled(user!.account_id))!.balanceNano).toBe(0n);
    // The link works once.
    const again = await new ConsoleClient(t.url).get(link.pathname + link.search);
    expect(again.status).toBe(400);
    expect(again.text).toContain('already used');
    expect(await accounts()).toBe(before + 1);
    const keys = await client.get('/console/keys?welcome=1');
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('Your email is verified');
  });

  it('refuses an expired link, and creates nothing', async () => {
    const client = new ConsoleClient(t.url);
    const home = await client.get('/console');
    await client.post('/console/signup', { email: 'late@example.com', password: 'a long passphrase' }, csrfOf(home.text));
    const link = new URL(await verificationLink(t.url, 'late@example.com'));
    clock.advance(86_400_000 + 1000);
    const before = await accounts();
    const expired = await client.get(link.pathname + link.search);
    expect(expired.status).toBe(400);
    expect(expired.text).toContain('expired');
    expect(await accounts()).toBe(before);
  });

  it('refuses sign-up and sign-in forms without the CSRF token', async () => {
    const client = new ConsoleClient(t.url);
    await client.get('/console');
    expect((await client.post('/console/signup', { email: 'x@example.com', password: 'a long passphrase' }, 'forged')).status).toBe(403);
    expect((await client.post('/console/signin', { email: 'ada@example.com', password: 'a long passphrase' })).status).toBe(403);
  });

  it('signs in with the right password only, throttles wrong ones per email, and signs out', async () => {
    const client = new ConsoleClient(t.url);
    const csrf = csrfOf((await client.get('/console')).text);
    const wrong = await client.post('/console/signin', { email: 'ada@example.com', password: 'not it at all' }, csrf);
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong email or password.');
    const unknown = await client.post('/console/signin', { email: 'nobody@example.com', password: 'not it at all' }, csrf);
    expect(unknown.text).toContain('Wrong email or password.');
    const right = await client.post('/console/signin', { email: 'ada@example.com', password: 'a long passphrase' }, csrf);
    expect(right.status).toBe(303);
    const keys = await client.get('/console/keys');
    expect(keys.text).toContain('ada@example.com');
    const out = await client.post('/console/signout', {}, csrfOf(keys.text));
    expect(out.status).toBe(303);
    expect((await client.get('/console/keys')).headers.location).toBe('/console');
    // Five failures for one email: the sixth attempt, even with the right password, waits.
    for (let i = 0; i < 5; i++) await client.post('/console/signin', { email: 'ada@example.com', password: `guess ${i} wrong` }, csrf);
    const throttled = await client.post('/console/signin', { email: 'ada@example.com', password: 'a long passphrase' }, csrf);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    clock.advance(900_000 + 1000);
    expect((await client.post('/console/signin', { email: 'ada@example.com', password: 'a long passphrase' }, csrf)).status).toBe(303);
  });

  it('answers a taken email like a new one, and mails the owner instead of a link', async () => {
    const client = new ConsoleClient(t.url);
    await signUp(client, 'grace@example.com');
    const other = new ConsoleClient(t.url);
    const answer = await other.post('/console/signup', { email: 'grace@example.com', password: 'another passphrase' }, csrfOf((await other.get('/console')).text));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('We sent a verification link');
    const outbox = await fetch(`${t.url}/admin/outbox`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json()) as { data: Array<{ to: string; text: string }> };
    const mails = outbox.data.filter((m) => m.to === 'grace@example.com');
    expect(mails).toHaveLength(2);
    expect(mails[1]!.text).toContain('already has one');
    expect(mails[1]!.text).not.toContain('token=');
    expect(await t.gw.db.query("SELECT 1 FROM console_signups WHERE email = 'grace@example.com'")).toHaveLength(1);
  });

  it('never logs a password or a session cookie', () => {
    const log = lines.join('\n');
    expect(log).not.toContain('a long passphrase');
    expect(log).not.toContain('correct horse battery');
    expect(log).toContain('console account created');
  });
});
