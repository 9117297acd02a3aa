/**
 * The console end to end in headless Chromium (issue 13, "Tests that must exist and pass"): a user signs
 * up, follows the emailed link, creates a key, calls /v1/chat/completions with it through the official
 * openai SDK, sees the usage row and the balance change, rotates the key (the old one refused), revokes
 * it; an operator tops the account up and refunds the row, and the user sees both. Everything is done
 * by filling and clicking the real pages by their labels and roles, which also proves the labels.
 * Screenshots of each page (and of the key and usage pages at a phone width) go to test/artifacts/.
 */
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { usd } from '../../src/console/html.js';
import { describeBrowser, launchChromium, pageBasics, screenshot } from '../helpers/browser.js';
import { verificationLink } from '../helpers/console.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const EMAIL = 'browser@example.com';
const PASSWORD = 'a browser passphrase';
/** An iPhone-sized viewport (issue 13 item 6: readable on a phone width). */
const PHONE = { width: 390, height: 844 };

describeBrowser('the console in a browser', () => {
  let t: TestGateway;
  let browser: Browser;
  let user: BrowserContext;
  let page: Page;
  let accountId = '';
  let key = '';
  let rotated = '';
  /** Console errors and failed page scripts (a CSP violation shows up here). */
  const problems: string[] = [];

  beforeAll(async () => {
    t = await startTestGateway();
    browser = await launchChromium();
    user = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    page = await user.newPage();
    watch(page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.dispose();
  });

  function watch(p: Page): void {
    // A failed load is reported by the response listener, with its address (Chromium asks for /favicon.ico by itself).
    p.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
    p.on('pageerror', (e) => { problems.push(e.message); });
    p.on('response', (r) => { if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') problems.push(`${r.status()} ${r.url()}`); });
  }

  const sdk = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${t.url}/v1`, apiKey, maxRetries: 0 });
  const chat = (apiKey: string): Promise<OpenAI.ChatCompletion> =>
    sdk(apiKey).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from the browser test' }], max_tokens: 16 });
  const balance = async (): Promise<bigint> => (await t.settled(accountId))!.balanceNano;

  /** The page's basics: one h1, every form control labelled. */
  async function expectBasics(p: Page): Promise<void> {
    const basics = await pageBasics(p);
    expect(basics.h1).toBe(1);
    expect(basics.unlabelled).toEqual([]);
  }

  /** A page at a phone width: saved, and nothing wider than the screen. */
  async function phoneShot(path: string, name: string): Promise<void> {
    const phone = await user.newPage();
    await phone.setViewportSize(PHONE);
    watch(phone);
    await phone.goto(`${t.url}${path}`);
    await screenshot(phone, name);
    const width = await phone.evaluate(() => ({ client: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth }));
    expect(width.client).toBeLessThanOrEqual(PHONE.width);
    expect(width.scroll).toBe(width.client); // nothing wider than the screen: no sideways scrolling
    await phone.close();
  }

  it('signs up, and follows the emailed link to the key page', async () => {
    await page.goto(`${t.url}/console`);
    await expectBasics(page);
    await screenshot(page, 'sign-in');
    const signup = page.getByRole('region', { name: 'Create an account' });
    await signup.getByLabel('Email').fill(EMAIL);
    await signup.getByLabel('Password').fill(PASSWORD);
    await signup.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/console/signup');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your email');
    expect(await page.getByText(EMAIL).count()).toBe(1);
    await expectBasics(page);
    await screenshot(page, 'check-email');

    await page.goto(await verificationLink(t.url, EMAIL));
    await page.waitForURL('**/console/keys?welcome=1');
    expect(await page.getByRole('status').textContent()).toContain('Your email is verified');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('API keys');
    // The browser holds the session as an HttpOnly, SameSite=Lax cookie of /console: no script reads it.
    const session = (await user.cookies()).find((c) => c.name === 'gw_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console', secure: false });
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const [row] = await t.gw.db.query<{ account_id: string }>('SELECT account_id FROM console_users WHERE email = $1', [EMAIL]);
    accountId = row!.account_id;
  });

  it('creates a key named "laptop", shown once with a working copy button', async () => {
    await page.getByLabel('Name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForURL('**/console/keys');
    key = (await page.locator('#new-key').textContent())!.trim();
    expect(key).toMatch(/^gw-[A-Za-z0-9_-]{20,}$/);
    expect(await page.getByRole('heading', { name: /Your new key “laptop”/ }).count()).toBe(1);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    expect(await page.getByRole('row').filter({ hasText: 'laptop' }).count()).toBe(1);
    await expectBasics(page);
    await screenshot(page, 'keys-new-key');
    // Reloaded, the page lists the key by name and prefix, never the key itself.
    await page.goto(`${t.url}/console/keys`);
    expect(await page.content()).not.toContain(key);
    await phoneShot('/console/keys', 'keys-phone');
  });

  it('calls the API with the key through the openai SDK, and the usage page shows the row and the balance change', async () => {
    const topup = await fetch(`${t.url}/admin/accounts/${accountId}/topups`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount_usd: '5' }),
    });
    expect(topup.status).toBe(200);
    expect(await balance()).toBe(5_000_000_000n);
    const completion = await chat(key);
    expect(completion.choices[0]!.message.content).toContain('Hello from the browser test');
    const after = await balance();
    expect(after).toBeLessThan(5_000_000_000n);
    const [used] = (await t.usage(accountId, { limit: 1 })).data;

    await page.getByRole('link', { name: 'Usage and balance' }).click();
    await page.waitForURL('**/console/usage');
    await page.reload();
    expect(await page.locator('#balance').textContent()).toBe(usd(after));
    expect(await page.locator('#held').textContent()).toBe(usd(0n));
    const topups = page.getByRole('region', { name: 'Top-ups' }).getByRole('row');
    expect(await topups.filter({ hasText: usd(5_000_000_000n) }).count()).toBe(1);
    const rows = page.getByRole('region', { name: 'Usage rows' }).getByRole('row').filter({ hasText: used!.requestId });
    expect(await rows.count()).toBe(1);
    expect(await rows.innerText()).toContain('gpt-4o-mini');
    expect(await rows.innerText()).toContain(usd(used!.amountNano));
    expect(await rows.innerText()).toContain('laptop');
    expect(5_000_000_000n - after).toBe(used!.amountNano);
    await expectBasics(page);
    await screenshot(page, 'usage');
    await phoneShot('/console/usage', 'usage-phone');
  });

  it("sets the key's budget and models on its page, and sees what it spent this month (issue 33 item 2)", async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.waitForURL('**/console/keys');
    await page.getByRole('link', { name: 'Controls of key laptop' }).click();
    await page.waitForURL('**/console/keys/key_*');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Key laptop');
    await expectBasics(page);
    await page.getByLabel('Budget (USD)').fill('2.5');
    await page.getByLabel('Budget period').selectOption('month');
    await page.getByLabel('Allowed models').fill('gpt-4o*');
    await page.getByRole('button', { name: 'Save controls' }).click();
    await page.waitForURL('**/console/keys/key_*?done=saved');
    expect(await page.getByRole('status').textContent()).toContain('The controls were saved');
    const spent = (await t.usage(accountId, { limit: 500 })).data.reduce((sum, r) => sum + r.amountNano, 0n);
    expect(await page.locator('[data-figure="spent"]').textContent()).toBe(usd(spent));
    expect(await page.getByLabel('Allowed models').inputValue()).toBe('gpt-4o*');
    await expect(sdk(key).chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'not mine' }], max_tokens: 8 })).rejects.toMatchObject({ status: 403 });
    await expectBasics(page);
    await screenshot(page, 'key-controls');
    await phoneShot(new URL(page.url()).pathname, 'key-controls-phone');
  });

  it('rotates the key: the old key is refused at once, the new one works; then revokes it', async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.waitForURL('**/console/keys');
    await page.getByRole('button', { name: 'Rotate key laptop' }).click();
    rotated = (await page.locator('#new-key').textContent())!.trim();
    expect(rotated).toMatch(/^gw-/);
    expect(rotated).not.toBe(key);
    expect(await page.getByRole('status').textContent()).toContain('the old key no longer works');
    await expect(chat(key)).rejects.toMatchObject({ status: 401 });
    await expect(sdk(rotated).models.list()).resolves.toBeTruthy();

    await page.getByRole('button', { name: 'Revoke key laptop' }).click();
    await page.waitForURL('**/console/keys?done=revoked');
    expect(await page.getByRole('status').textContent()).toContain('The key was revoked');
    expect(await page.getByRole('button', { name: 'Revoke key laptop' }).count()).toBe(0);
    await expect(chat(rotated)).rejects.toMatchObject({ status: 401 });
    await expect(sdk(rotated).models.list()).rejects.toMatchObject({ status: 401 });
  });

  it('searches the catalogue', async () => {
    await page.getByRole('link', { name: 'Catalogue' }).click();
    await page.waitForURL('**/console/catalogue');
    await page.getByLabel('Search offerings').fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**/console/catalogue?q=gpt-4o-mini');
    const rows = page.getByRole('row').filter({ hasText: 'gpt-4o-mini' });
    expect(await rows.count()).toBeGreaterThan(0);
    expect(await page.getByRole('row').filter({ hasText: 'whisper' }).count()).toBe(0);
    await expectBasics(page);
    await screenshot(page, 'catalogue');
  });

  it('an operator tops the account up and refunds the row; the user sees both', async () => {
    const [row] = (await t.usage(accountId, { limit: 1 })).data;
    const before = await balance();
    const operator = await (await browser.newContext()).newPage();
    watch(operator);
    await operator.goto(`${t.url}/console/operator`);
    await expectBasics(operator);
    await operator.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await operator.getByRole('button', { name: 'Sign in as operator' }).click();
    await operator.waitForURL('**/console/operator');
    const listed = operator.getByRole('row').filter({ hasText: accountId });
    expect(await listed.innerText()).toContain(EMAIL);
    expect(await listed.innerText()).toContain(usd(before));
    await expectBasics(operator);
    await screenshot(operator, 'operator-accounts');

    await operator.getByRole('link', { name: accountId }).click();
    await operator.waitForURL(`**/console/operator/accounts/${accountId}`);
    await operator.getByLabel('Amount in US dollars').fill('2');
    await operator.getByRole('button', { name: 'Add to balance' }).click();
    await operator.waitForURL('**?done=topup');
    expect(await balance()).toBe(before + 2_000_000_000n);
    await operator.getByRole('button', { name: `Refund usage row ${row!.id}` }).click();
    await operator.waitForURL('**?done=refunded');
    expect(await balance()).toBe(before + 2_000_000_000n + row!.amountNano);
    expect(await operator.getByRole('row').filter({ hasText: row!.id }).filter({ hasText: 'Refunded' }).count()).toBe(1);
    await expectBasics(operator);
    await screenshot(operator, 'operator-account');
    await operator.context().close();

    await page.goto(`${t.url}/console/usage`);
    expect(await page.locator('#balance').textContent()).toBe(usd(before + 2_000_000_000n + row!.amountNano));
    expect(await page.getByRole('region', { name: 'Top-ups' }).getByRole('row').filter({ hasText: usd(2_000_000_000n) }).count()).toBe(1);
    const refunds = page.getByRole('region', { name: 'Usage rows' }).getByRole('row').filter({ hasText: 'refund' });
    expect(await refunds.count()).toBe(1);
    expect(await refunds.innerText()).toContain(usd(-row!.amountNano));
  });

  it('ran every page without a script error or a CSP violation', () => {
    expect(problems).toEqual([]);
  });
});
