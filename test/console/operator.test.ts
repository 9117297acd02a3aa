/**
 * The operator view (issue 13 item 5) over real HTTP: the admin token opens it (a wrong one is refused
 * and throttled), a user's session never does; top-ups and refunds move the ledger exactly and once;
 * reconcile and the development outbox are shown; every form needs the session's CSRF token.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { ConsoleClient, csrfOf, signUp } from '../helpers/console.js';
import { describeStore } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

describeStore('console operator view', () => {
  let t: TestGateway;
  const clock = new ManualClock();
  const lines: string[] = [];
  let operator: ConsoleClient;
  let accountId: string;

  /** Signs `client` in as the operator; returns the answer of the sign-in. */
  const operatorSignin = async (client: ConsoleClient, token = ADMIN_TOKEN) => {
    const form = await client.get('/console/operator');
    return client.post('/console/operator/signin', { token }, csrfOf(form.text));
  };
  const balance = async (): Promise<bigint> => (await t.settled(accountId))!.balanceNano;
  const accountPath = (): string => `/console/operator/accounts/${accountId}`;

  beforeAll(async () => {
    t = await startTestGateway({ clock, log: (message, fields) => { lines.push(`${message} ${JSON.stringify(fields ?? {})}`); } });
    operator = new ConsoleClient(t.url);
    const user = new ConsoleClient(t.url);
    await signUp(user, 'payer@example.com');
    const [row] = await t.gw.db.query<{ account_id: string }>("SELECT account_id FROM console_users WHERE email = 'payer@example.com'");
    accountId = row!.account_id;
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  it('shows the sign-in form without a session, and sends the other pages to it', async () => {
    const client = new ConsoleClient(t.url);
    const form = await client.get('/console/operator');
    expect(form.status).toBe(200);
    expect(form.text).toMatch(/<label for="admin-token">Admin token<\/label><input id="admin-token" name="token" type="password"/);
    expect(form.setCookies.some((c) => c.startsWith('gw_csrf='))).toBe(true);
    for (const path of [accountPath(), '/console/operator/reconcile', '/console/operator/outbox']) {
      const answer = await client.get(path);
      expect(answer.status, path).toBe(303);
      expect(answer.headers.location).toBe('/console/operator');
    }
    const post = await client.post(`${accountPath()}/topup`, { amount: '5' }, csrfOf(form.text));
    expect(post.status).toBe(401);
    expect(await balance()).toBe(0n);
  });

  it('refuses a wrong token (401), opens the view with the right one, and throttles repeated failures (429)', async () => {
    const client = new ConsoleClient(t.url);
    const wrong = await operatorSignin(client, 'not-the-token');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('not the admin token');
    expect(client.cookies.has('gw_session')).toBe(false);
    expect((await client.get('/console/operator')).text).toContain('Admin token');

    const right = await operatorSignin(operator);
    expect(right.status).toBe(303);
    expect(right.headers.location).toBe('/console/operator');
    const session = right.setCookies.find((c) => c.startsWith('gw_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
    const view = await operator.get('/console/operator');
    expect(view.status).toBe(200);
    expect(view.text).toContain('<h1>Accounts</h1>');
    expect(view.text).not.toContain('Admin token');

    // The success cleared the count; five failures from this address make the next attempt wait, even with the right token.
    for (let i = 0; i < 5; i++) expect((await operatorSignin(client, `guess-${i}`)).status).toBe(401);
    const throttled = await operatorSignin(client);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(client.cookies.has('gw_session')).toBe(false);
    clock.advance(900_000 + 1000);
    expect((await operatorSignin(client)).status).toBe(303);
  });

  it('refuses a user session (403), and gives an operator session no account page', async () => {
    const user = new ConsoleClient(t.url);
    await signUp(user, 'curious@example.com');
    const home = await user.get('/console/operator');
    expect(home.status).toBe(403);
    expect(home.text).toContain('Sign out');
    expect((await user.get(accountPath())).status).toBe(403);
    const csrf = csrfOf((await user.get('/console/keys')).text);
    expect((await user.post(`${accountPath()}/topup`, { amount: '5' }, csrf)).status).toBe(403);
    expect((await user.post('/console/operator/signin', { token: ADMIN_TOKEN }, user.cookies.get('gw_csrf'))).status).toBe(403);
    expect(await balance()).toBe(0n);
    const keys = await operator.get('/console/keys');
    expect(keys.status).toBe(303);
    expect(keys.headers.location).toBe('/console');
  });

  it('lists the accounts, and tops one up exactly; a non-number or non-positive amount is a 400', async () => {
    const list = await operator.get('/console/operator');
    expect(list.text).toContain(`href="/console/operator/accounts/${accountId}"`);
    expect(list.text).toContain('payer@example.com');
    const detail = await operator.get(accountPath());
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('No top-ups yet.');
    const csrf = csrfOf(detail.text);
    const done = await operator.post(`${accountPath()}/topup`, { amount: '12.345678901' }, csrf);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(`${accountPath()}?done=topup`);
    expect(await balance()).toBe(12_345_678_901n);
    const after = await operator.get(done.headers.location as string);
    expect(after.text).toContain('The top-up was added to the balance.');
    expect(after.text).toMatch(/<td class="num">\$12\.345678901<\/td>/); // the top-up row
    expect((await operator.get('/console/operator?q=payer')).text).toMatch(new RegExp(`data-account-id="${accountId}">.*\\$12\\.345678901`));
    for (const amount of ['ten', '0', '-5', '1e3', '1.0000000001', '']) {
      const refused = await operator.post(`${accountPath()}/topup`, { amount }, csrf);
      expect(refused.status, amount).toBe(400);
    }
    expect((await operator.post('/console/operator/accounts/acct_nobody/topup', { amount: '1' }, csrf)).status).toBe(404);
    expect(await balance()).toBe(12_345_678_901n);
    expect((await operator.get('/console/operator?done=%3Cscript%3E')).text).not.toContain('<script>');
  });

  it('refunds a billed usage row exactly, and refuses a second refund and a refund of a refund cleanly', async () => {
    const { key } = await t.gw.runtime.ledger.createKey(accountId);
    const before = await balance();
    const sdk = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 });
    await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Bill me' }] });
    const billed = await balance();
    expect(billed).toBeLessThan(before);
    const [row] = (await t.usage(accountId, { limit: 1 })).data;
    expect(row!.amountNano).toBe(before - billed);

    const detail = await operator.get(accountPath());
    expect(detail.text).toContain(`data-row-id="${row!.id}"`);
    expect(detail.text).toContain('<th scope="col">Model</th><th scope="col">Deployment</th><th scope="col">Capability</th>');
    expect(detail.text).toContain(`<td>${row!.model}</td><td><code>${row!.deployment ?? '—'}</code></td>`);
    expect(detail.text).toContain(`action="/console/operator/usage/${row!.id}/refund"`);
    const csrf = csrfOf(detail.text);
    const done = await operator.post(`/console/operator/usage/${row!.id}/refund`, {}, csrf);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(`${accountPath()}?done=refunded`);
    expect(await balance()).toBe(before);

    const after = await operator.get(done.headers.location as string);
    expect(after.text).toContain('The usage row was refunded');
    expect(after.text).not.toContain(`action="/console/operator/usage/${row!.id}/refund"`);
    const again = await operator.post(`/console/operator/usage/${row!.id}/refund`, {}, csrf);
    expect(again.status).toBe(409);
    expect(again.text).toContain('refunded already');
    const [refundRow] = (await t.usage(accountId, { limit: 1 })).data;
    expect(refundRow!.refundOf).toBe(row!.id);
    expect((await operator.post(`/console/operator/usage/${refundRow!.id}/refund`, {}, csrf)).status).toBe(400);
    expect((await operator.post('/console/operator/usage/use_nothing/refund', {}, csrf)).status).toBe(404);
    expect(await balance()).toBe(before);
  });

  it('shows the reconcile status: ok, or the accounts that differ', async () => {
    const ok = await operator.get('/console/operator/reconcile');
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('<strong>OK</strong>');
    // Break one account's books by hand: the page names it, with the difference.
    const broken = await t.account('1');
    await t.gw.db.query('UPDATE accounts SET balance_nano = balance_nano - 7 WHERE id = $1', [broken.id]);
    const off = await operator.get('/console/operator/reconcile');
    expect(off.text).toContain('<strong>Not OK</strong>');
    expect(off.text).toContain(`<code>${broken.id}</code>`);
    expect(off.text).toContain('$0.000000007');
    await t.gw.db.query('UPDATE accounts SET balance_nano = balance_nano + 7 WHERE id = $1', [broken.id]);
    expect((await operator.get('/console/operator/reconcile')).text).toContain('<strong>OK</strong>');
  });

  it('lists the verification mail of the sign-up in the outbox', async () => {
    const outbox = await operator.get('/console/operator/outbox');
    expect(outbox.status).toBe(200);
    expect(outbox.text).toContain('href="/console/operator/outbox"');
    const payer = outbox.text.indexOf('To payer@example.com');
    const curious = outbox.text.indexOf('To curious@example.com');
    expect(payer).toBeGreaterThan(0);
    expect(curious).toBeGreaterThan(0);
    expect(curious).toBeLessThan(payer); // newest first
    expect(outbox.text).toContain('Verify your email for AI Gateway');
    expect(outbox.text).toMatch(/<pre>Follow this link[^<]*\/console\/verify\?token=/);
  });

  it('refuses every form without the CSRF token (403)', async () => {
    const { key } = await t.gw.runtime.ledger.createKey(accountId);
    await new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Again' }] });
    const [row] = (await t.usage(accountId, { limit: 1 })).data;
    expect(row!.refundOf).toBeNull();
    const before = await balance();
    expect((await operator.post(`/console/operator/usage/${row!.id}/refund`, {})).status).toBe(403);
    expect((await operator.post(`${accountPath()}/topup`, { amount: '3' })).status).toBe(403);
    expect((await operator.post(`${accountPath()}/topup`, { amount: '3' }, 'forged')).status).toBe(403);
    expect((await operator.post('/console/operator/signout', {})).status).toBe(403);
    expect((await operator.get('/console/operator')).status).toBe(200);
    const anonymous = new ConsoleClient(t.url);
    await anonymous.get('/console/operator');
    expect((await anonymous.post('/console/operator/signin', { token: ADMIN_TOKEN }, 'forged')).status).toBe(403);
    expect(anonymous.cookies.has('gw_session')).toBe(false);
    expect(await balance()).toBe(before);
  });

  it('signs out, after which the view shows the sign-in form again', async () => {
    const csrf = csrfOf((await operator.get('/console/operator')).text);
    const out = await operator.post('/console/operator/signout', {}, csrf);
    expect(out.status).toBe(303);
    expect(operator.cookies.has('gw_session')).toBe(false);
    const form = await operator.get('/console/operator');
    expect(form.text).toContain('Admin token');
    expect((await operator.get(accountPath())).headers.location).toBe('/console/operator');
  });

  it('never logs the admin token', () => {
    expect(lines.join('\n')).not.toContain(ADMIN_TOKEN);
    expect(lines.some((l) => l.startsWith('console operator sign-in refused'))).toBe(true);
  });
});

describeStore('console operator view without an admin token', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway({ env: { GATEWAY_ADMIN_TOKEN: '' } }); }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  it('answers 404 "not enabled" to every operator page', async () => {
    const client = new ConsoleClient(t.url);
    const home = await client.get('/console/operator');
    expect(home.status).toBe(404);
    expect(home.text).toContain('not enabled');
    const csrf = csrfOf((await client.get('/console')).text);
    expect((await client.post('/console/operator/signin', { token: '' }, csrf)).status).toBe(404);
    expect((await client.get('/console/operator/reconcile')).status).toBe(404);
  });
});
