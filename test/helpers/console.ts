/**
 * A cookie-keeping HTTP client for the console's pages (issue 13), for the tests that need no browser:
 * it follows nothing by itself, keeps every Set-Cookie, and reads a page's CSRF field, so a test walks
 * the console as a browser without JavaScript would.
 */
import { request } from 'undici';
import { ADMIN_TOKEN } from './gateway.js';

/** One answer of the console. */
export interface PageAnswer { status: number; headers: Record<string, string | string[] | undefined>; text: string; setCookies: string[] }

/** A browser-like client of one gateway. */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string, readonly extraHeaders: Record<string, string> = {}) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; ');
  }

  /** Sends a request with the kept cookies; keeps the answer's cookies (Max-Age=0 deletes). */
  async send(method: 'GET' | 'POST', path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<PageAnswer> {
    const res = await request(this.base + path, {
      method,
      headers: { ...this.extraHeaders, ...(this.cookies.size ? { cookie: this.cookieHeader() } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const text = await res.body.text();
    const raw = res.headers['set-cookie'];
    const setCookies = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    for (const line of setCookies) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = decodeURIComponent(pair!.slice(at + 1));
      if (/max-age=0/i.test(line)) this.cookies.delete(name); else this.cookies.set(name, value);
    }
    return { status: res.statusCode, headers: res.headers, text, setCookies };
  }

  get(path: string, headers?: Record<string, string>): Promise<PageAnswer> { return this.send('GET', path, undefined, headers); }

  /** Posts a form with the CSRF token of the page at `from` (or the given token). */
  async post(path: string, form: Record<string, string>, csrf?: string): Promise<PageAnswer> {
    return this.send('POST', path, { csrf: csrf ?? '', ...form });
  }
}

/** The CSRF token of a page's first form. */
export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF field on the page');
  return match[1]!;
}

/** The verification link of the newest outbox message to `email`. */
export async function verificationLink(base: string, email: string): Promise<string> {
  const res = await request(`${base}/admin/outbox`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const { data } = (await res.body.json()) as { data: Array<{ to: string; text: string }> };
  const message = [...data].reverse().find((m) => m.to === email);
  const link = message && /(https?:\/\/\S+\/console\/verify\?token=[A-Za-z0-9_-]+)/.exec(message.text)?.[1];
  if (!link) throw new Error(`no verification mail to ${email}`);
  return link;
}

/** Signs up and verifies `email`; the client ends signed in. */
export async function signUp(client: ConsoleClient, email: string, password = 'correct horse battery'): Promise<void> {
  const home = await client.get('/console');
  const answer = await client.post('/console/signup', { email, password }, csrfOf(home.text));
  if (answer.status !== 200) throw new Error(`sign-up answered ${answer.status}`);
  const link = new URL(await verificationLink(client.base, email));
  const verified = await client.get(link.pathname + link.search);
  if (verified.status !== 303) throw new Error(`verification answered ${verified.status}: ${verified.text.slice(0, 200)}`);
}
