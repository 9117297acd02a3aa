/**
 * The usage and balance page and its CSV export (issue 13 item 3) over real HTTP: an account signed up
 * through the console, topped up through the ledger, with two keys made on the key page and billed
 * calls through the official openai SDK (chat and embeddings). The page shows the money exactly, the
 * top-up, each usage row; the filters narrow; the chart data has the daily totals; the CSV has exactly
 * the filtered rows with exact amounts and defused formulas; another account sees none of it.
 */
import { existsSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRow } from '../../src/ledger/types.js';
import { formatUsd } from '../../src/money.js';
import { usd } from '../../src/console/html.js';
import { embedJson } from '../../src/console/usage-chart-data.js';
import { csvText } from '../../src/console/usage-csv.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ConsoleClient, csrfOf, signUp } from '../helpers/console.js';
import { CHROMIUM, launchChromium, screenshot } from '../helpers/browser.js';

/** A key name a spreadsheet would run as a formula, with a comma and quotes (CSV quoting). */
const FORMULA_NAME = '=HYPERLINK("http://example.com","x")';

interface Account { client: ConsoleClient; id: string; keys: Array<{ id: string; name: string; key: string }> }

const dayOf = (at: Date): string => at.toISOString().slice(0, 10);
const shiftDay = (day: string, days: number): string => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));

/** The text of the element with this id (no nested elements in the ones read here). */
function byId(html: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html);
  if (!match) throw new Error(`no #${id} on the page`);
  return match[1]!;
}

/** The usage row ids the page lists, in order. */
const listedIds = (html: string): string[] => [...html.matchAll(/<tr data-usage-id="([^"]+)">/g)].map((m) => m[1]!);

/** The embedded chart data. */
function chartData(html: string): { days: string[]; byCapability: Array<{ name: string; nano: string[] }>; byModel: Array<{ name: string; nano: string[] }> } {
  const match = /<script type="application\/json" id="spend-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error('no chart data on the page');
  return JSON.parse(match[1]!);
}

/** Per day and name, the sum of the rows' amounts, as nano strings (the chart's expected values). */
function expectedSeries(rows: UsageRow[], nameOf: (r: UsageRow) => string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, bigint>> = {};
  for (const r of rows) {
    const byDay = (out[nameOf(r)] ??= {});
    byDay[dayOf(r.createdAt)] = (byDay[dayOf(r.createdAt)] ?? 0n) + r.amountNano;
  }
  return Object.fromEntries(Object.entries(out).map(([name, days]) => [name, Object.fromEntries(Object.entries(days).map(([d, n]) => [d, String(n)]))]));
}

function seriesByDay(data: ReturnType<typeof chartData>, which: 'byCapability' | 'byModel'): Record<string, Record<string, string>> {
  return Object.fromEntries(data[which].map((s) => [s.name, Object.fromEntries(data.days.map((d, i) => [d, s.nano[i]!]).filter(([, n]) => n !== '0'))]));
}

/** Parses CSV text (RFC 4180: quoted fields, doubled quotes, CRLF lines). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; } else field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows;
}

describe('console usage and balance', () => {
  let t: TestGateway;
  let ann: Account;
  let bob: Account;
  let annRows: UsageRow[];

  const accountOf = async (email: string): Promise<string> =>
    (await t.gw.db.query<{ account_id: string }>('SELECT account_id FROM console_users WHERE email = $1', [email]))[0]!.account_id;

  /** Creates a key on the key page and reads it from the one answer that shows it. */
  async function newKey(client: ConsoleClient, accountId: string, name: string): Promise<{ id: string; name: string; key: string }> {
    const keysPage = await client.get('/console/keys');
    const created = await client.post('/console/keys', { name }, csrfOf(keysPage.text));
    expect(created.status).toBe(200);
    const key = /id="new-key">([^<]+)</.exec(created.text)![1]!;
    const [row] = await t.gw.db.query<{ id: string }>('SELECT id FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id LIMIT 1', [accountId]);
    return { id: row!.id, name, key };
  }

  async function setUp(email: string, names: string[]): Promise<Account> {
    const client = new ConsoleClient(t.url);
    await signUp(client, email);
    const id = await accountOf(email);
    await t.gw.runtime.ledger.topUp(id, 5_000_000_000n);
    const keys = [];
    for (const name of names) keys.push(await newKey(client, id, name));
    return { client, id, keys };
  }

  const sdk = (key: string): OpenAI => new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 });

  beforeAll(async () => {
    t = await startTestGateway();
    ann = await setUp('ann@example.com', ['laptop', FORMULA_NAME]);
    bob = await setUp('bob@example.com', ['bobs key']);
    const [laptop, formula] = [sdk(ann.keys[0]!.key), sdk(ann.keys[1]!.key)];
    await laptop.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    await laptop.embeddings.create({ model: 'text-embedding-3-small', input: 'The quick brown fox' });
    await formula.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello again, a little longer' }] });
    await sdk(bob.keys[0]!.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Bob says hi' }] });
    annRows = (await t.usage(ann.id, { limit: 100 })).data.sort((a, b) => (a.id < b.id ? 1 : -1));
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  it('sends a visitor without a session to the sign-in page', async () => {
    const anonymous = new ConsoleClient(t.url);
    for (const path of ['/console/usage', '/console/usage.csv']) {
      const answer = await anonymous.get(path);
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toBe('/console');
    }
  });

  it('shows the balance, held amount, credit and available exactly, and the top-up', async () => {
    const account = (await t.settled(ann.id))!;
    expect(account.balanceNano).toBeLessThan(5_000_000_000n);
    const page = await ann.client.get('/console/usage');
    expect(page.status).toBe(200);
    expect(byId(page.text, 'balance')).toBe(usd(account.balanceNano));
    expect(byId(page.text, 'held')).toBe(usd(account.heldNano));
    expect(byId(page.text, 'credit')).toBe(usd(account.creditLimitNano));
    expect(byId(page.text, 'available')).toBe(usd(account.balanceNano + account.creditLimitNano));
    const [topup] = await t.gw.db.query<{ id: string }>('SELECT id FROM topups WHERE account_id = $1', [ann.id]);
    expect(page.text).toMatch(new RegExp(`<tr data-topup-id="${topup!.id}"><td>[^<]+</td><td class="num">\\$5\\.00</td></tr>`));
  });

  it('lists each usage row, newest first, with its key, model, capability, quantity and exact amount', async () => {
    expect(annRows.map((r) => r.kind).sort()).toEqual(['embeddings', 'tokens', 'tokens']);
    const page = await ann.client.get('/console/usage');
    expect(listedIds(page.text)).toEqual(annRows.map((r) => r.id));
    for (const row of annRows) {
      const tr = new RegExp(`<tr data-usage-id="${row.id}">(.*?)</tr>`).exec(page.text)![1]!;
      const key = ann.keys.find((k) => k.id === row.keyId)!;
      expect(tr).toContain(`<td class="num">${usd(row.amountNano)}</td>`);
      expect(tr).toContain(`<td class="num">${row.quantity} ${row.unit}</td>`);
      expect(tr).toContain(`<code>${row.model}</code>`);
      expect(tr).toContain(`<td>${row.kind}</td>`);
      expect(tr).toContain(row.requestId);
      expect(tr).toContain(key.name === FORMULA_NAME ? '=HYPERLINK(&quot;http://example.com&quot;,&quot;x&quot;)' : key.name);
    }
    // No key is ever rendered on this page.
    for (const key of [...ann.keys, ...bob.keys]) expect(page.text).not.toContain(key.key);
  });

  it('narrows the rows by key (revoked keys included), model, capability and date range', async () => {
    const ids = async (query: string): Promise<string[]> => {
      const page = await ann.client.get(`/console/usage?${query}`);
      expect(page.status).toBe(200);
      return listedIds(page.text);
    };
    const [laptop, formula] = ann.keys;
    const revoke = await ann.client.post(`/console/keys/${formula!.id}/revoke`, {}, csrfOf((await ann.client.get('/console/keys')).text));
    expect(revoke.status).toBe(303);
    const page = await ann.client.get('/console/usage');
    expect(page.text).toContain(`<option value="${formula!.id}">=HYPERLINK(&quot;http://example.com&quot;,&quot;x&quot;) (`);
    expect(page.text).toMatch(new RegExp(`<option value="${formula!.id}">[^<]*\\(revoked\\)</option>`));
    expect(page.text).not.toContain(bob.keys[0]!.id);
    expect(await ids(`key=${laptop!.id}`)).toEqual(annRows.filter((r) => r.keyId === laptop!.id).map((r) => r.id));
    expect(await ids(`key=${formula!.id}`)).toEqual(annRows.filter((r) => r.keyId === formula!.id).map((r) => r.id));
    expect(await ids('model=text-embedding-3-small')).toEqual(annRows.filter((r) => r.model === 'text-embedding-3-small').map((r) => r.id));
    expect(await ids('capability=tokens')).toEqual(annRows.filter((r) => r.kind === 'tokens').map((r) => r.id));
    expect(await ids(`capability=tokens&key=${laptop!.id}`)).toHaveLength(1);
    const day = dayOf(annRows[0]!.createdAt);
    expect(annRows.every((r) => dayOf(r.createdAt) === day)).toBe(true);
    expect(await ids(`from=${day}&to=${day}`)).toEqual(annRows.map((r) => r.id));
    expect(await ids(`from=${shiftDay(day, 1)}`)).toEqual([]);
    expect(await ids(`to=${shiftDay(day, -1)}`)).toEqual([]);
    expect(await ids(`from=${shiftDay(day, -3)}&to=${shiftDay(day, -2)}`)).toEqual([]);
    const empty = await ann.client.get(`/console/usage?from=${shiftDay(day, 1)}`);
    expect(empty.text).toContain('No usage rows match these filters.');
    expect(empty.text).toContain('No spend in this selection.');
    // Another account's key id, or an unknown model, matches nothing: no error, no rows.
    expect(await ids(`key=${bob.keys[0]!.id}`)).toEqual([]);
    expect(await ids('model=nope')).toEqual([]);
  });

  it('refuses a malformed date with a clear message and status 400', async () => {
    for (const bad of ['2026-13-01', '2026-02-30', 'yesterday', '24/11/2026']) {
      const page = await ann.client.get(`/console/usage?from=${encodeURIComponent(bad)}`);
      expect(page.status).toBe(400);
      expect(page.text).toContain(`The “from” date “${bad}” is not a date: use YYYY-MM-DD`);
      expect(listedIds(page.text)).toEqual([]);
    }
    const csv = await ann.client.get('/console/usage.csv?to=2026-1-1');
    expect(csv.status).toBe(400);
    expect(csv.text).toContain('The “to” date “2026-1-1” is not a date');
  });

  it('embeds daily totals per capability and per model for Chart.js, with tables of the same figures', async () => {
    const page = await ann.client.get('/console/usage');
    const data = chartData(page.text);
    expect(data.days).toEqual([dayOf(annRows[0]!.createdAt)]);
    expect(seriesByDay(data, 'byCapability')).toEqual(expectedSeries(annRows, (r) => r.kind));
    expect(seriesByDay(data, 'byModel')).toEqual(expectedSeries(annRows, (r) => r.model));
    const narrowed = chartData((await ann.client.get('/console/usage?capability=embeddings')).text);
    expect(seriesByDay(narrowed, 'byModel')).toEqual(expectedSeries(annRows.filter((r) => r.kind === 'embeddings'), (r) => r.model));
    expect(page.text).toMatch(/<canvas id="chart-byCapability" data-series="byCapability" role="img" aria-label="By capability: [^"]+">/);
    expect(page.text).toMatch(/<canvas id="chart-byModel" data-series="byModel" role="img" aria-label="By model: [^"]+">/);
    const total = annRows.reduce((sum, r) => sum + r.amountNano, 0n);
    expect(page.text).toMatch(new RegExp(`<details><summary>Daily totals by model as a table</summary>[\\s\\S]*?<td class="num">${usd(total).replace(/[$.]/g, '\\$&')}</td></tr>`));
    // Scripts only from the gateway (CSP script-src 'self'): Chart.js, then the page's chart script.
    const scripts = [...page.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts).toEqual([' src="/console/assets/chart.umd.min.js" defer', ' src="/console/assets/usage-chart.js" defer', ' type="application/json" id="spend-data"']);
    const asset = await ann.client.get('/console/assets/usage-chart.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    expect(asset.text).toContain("getElementById('spend-data')");
    expect(embedJson({ name: '</script><b>&' })).toBe('{"name":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}');
  });

  it.skipIf(!existsSync(CHROMIUM))('draws both charts with Chart.js in Chromium under the page\'s CSP, without errors', async () => {
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      await context.addCookies([...ann.client.cookies].map(([name, value]) => ({ name, value, url: `${t.url}/console` })));
      const page = await context.newPage();
      const errors: string[] = [];
      // A browser asks for /favicon.ico by itself (not a console page): every other answer must be found.
      page.on('response', (r) => { if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') errors.push(`${r.status()} ${r.url()}`); });
      page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${t.url}/console/usage`);
      await page.waitForFunction(() => (window as any).Chart?.getChart('chart-byModel') !== undefined);
      const drawn = await page.evaluate(() => ['chart-byCapability', 'chart-byModel'].map((id) => {
        const chart = (window as any).Chart.getChart(id);
        return { type: chart.config.type, stacked: chart.options.scales.y.stacked, labels: chart.data.datasets.map((d: { label: string }) => d.label) };
      }));
      expect(drawn).toEqual([
        { type: 'bar', stacked: true, labels: [...new Set(annRows.map((r) => r.kind))].sort() },
        { type: 'bar', stacked: true, labels: [...new Set(annRows.map((r) => r.model))].sort() },
      ]);
      expect(errors).toEqual([]);
      await screenshot(page, 'console-usage');
    } finally {
      await browser.close();
    }
  });

  it('exports exactly the filtered rows as CSV, with exact amounts and formulas defused', async () => {
    const day = dayOf(annRows[0]!.createdAt);
    const all = await ann.client.get('/console/usage.csv');
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(all.headers['content-disposition']).toBe(`attachment; filename="usage-start-${dayOf(new Date())}.csv"`);
    const lines = parseCsv(all.text);
    expect(lines[0]).toEqual(['id', 'created_at', 'key_id', 'key_name', 'model', 'capability', 'quantity', 'unit', 'amount_usd', 'request_id', 'deployment']);
    const names = new Map(ann.keys.map((k) => [k.id, k.name]));
    expect(lines.slice(1)).toEqual(annRows.map((r) => [
      r.id, r.createdAt.toISOString(), r.keyId, names.get(r.keyId!) === FORMULA_NAME ? `'${FORMULA_NAME}` : names.get(r.keyId!), r.model, r.kind, String(r.quantity), r.unit, formatUsd(r.amountNano), r.requestId, r.deployment ?? '',
    ]));
    expect(all.text).toContain(`"'=HYPERLINK(""http://example.com"",""x"")"`);

    const tokens = await ann.client.get(`/console/usage.csv?capability=tokens&from=${day}&to=${day}`);
    expect(tokens.headers['content-disposition']).toBe(`attachment; filename="usage-${day}-${day}.csv"`);
    expect(parseCsv(tokens.text).slice(1).map((l) => [l[0], l[8]])).toEqual(annRows.filter((r) => r.kind === 'tokens').map((r) => [r.id, formatUsd(r.amountNano)]));
    const none = await ann.client.get(`/console/usage.csv?from=${shiftDay(day, 1)}`);
    expect(parseCsv(none.text)).toHaveLength(1);
    // The page's CSV link carries the page's filters.
    const page = await ann.client.get(`/console/usage?capability=tokens&from=${day}`);
    expect(page.text).toContain(`id="csv-link" href="/console/usage.csv?capability=tokens&amp;from=${day}"`);
  });

  it('shows each row\'s deployment on the page and as the CSV\'s last column (issue 29 item 7)', async () => {
    const dee = await setUp('dee@example.com', []);
    const holdId = 'hold_console_usage_deployment';
    expect(await t.gw.runtime.ledger.reserve({ holdId, accountId: dee.id, amountNano: 1_000_000n, ttlMs: 60_000 })).toBe(true);
    const line = (requestId: string, deployment?: string) => ({ requestId, model: 'gpt-4o', kind: 'tokens', quantity: 3n, unit: 'token', amountNano: 30n, details: {}, deployment });
    // An operator-chosen id may hold a comma, or start like a formula: quoted and defused as any text field.
    const rows = await t.gw.runtime.ledger.settle({ holdId, accountId: dee.id, rows: [line('req_dep_a', 'openai/gpt-4o'), line('req_dep_b', '=eu,west'), line('req_dep_c')] });
    const csv = parseCsv((await dee.client.get('/console/usage.csv')).text);
    expect(csv[0]!.at(-1)).toBe('deployment');
    expect(new Map(csv.slice(1).map((l) => [l[9], l[10]]))).toEqual(new Map([['req_dep_a', 'openai/gpt-4o'], ['req_dep_b', "'=eu,west"], ['req_dep_c', '']]));
    const page = await dee.client.get('/console/usage');
    expect(page.text).toContain('<th scope="col">Model</th><th scope="col">Deployment</th><th scope="col">Capability</th>');
    const cells = rows.map((r) => new RegExp(`<tr data-usage-id="${r.id}">.*?<td><code>gpt-4o</code></td><td>(.*?)</td>`).exec(page.text)![1]);
    expect(cells).toEqual(['<code>openai/gpt-4o</code>', '<code>=eu,west</code>', '—']);
  });

  it('defuses every formula lead character and quotes what needs it', () => {
    expect(['=1+1', '+1', '-1', '@SUM(A1)', '\tx', 'plain', 'a,b', 'say "hi"', ''].map(csvText))
      .toEqual(["'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx", 'plain', '"a,b"', '"say ""hi"""', '']);
  });

  it("shows another account none of the first account's rows, whatever the filters", async () => {
    const bobRows = (await t.usage(bob.id, { limit: 100 })).data;
    expect(bobRows).toHaveLength(1);
    const day = dayOf(annRows[0]!.createdAt);
    for (const query of ['', `key=${ann.keys[0]!.id}`, 'model=text-embedding-3-small', 'capability=embeddings', `from=${day}&to=${day}`]) {
      const page = await bob.client.get(`/console/usage?${query}`);
      expect(page.status).toBe(200);
      const csv = await bob.client.get(`/console/usage.csv?${query}`);
      for (const row of annRows) {
        expect(page.text).not.toContain(row.id);
        expect(page.text).not.toContain(row.requestId);
        expect(csv.text).not.toContain(row.id);
      }
      if (query === '' || query.startsWith('from')) expect(listedIds(page.text)).toEqual(bobRows.map((r) => r.id));
      else expect(listedIds(page.text)).toEqual([]);
    }
    const bobsPage = await bob.client.get('/console/usage');
    expect(bobsPage.text).not.toContain('text-embedding-3-small');
    expect(bobsPage.text).not.toContain('laptop');
  });

  it('lists the newest 200 rows with a note, and the CSV pages through all of them', async () => {
    const carol = await setUp('carol@example.com', []);
    const holdId = 'hold_console_usage_bulk';
    expect(await t.gw.runtime.ledger.reserve({ holdId, accountId: carol.id, amountNano: 1_000_000n, ttlMs: 60_000 })).toBe(true);
    const count = 1001;
    await t.gw.runtime.ledger.settle({ holdId, accountId: carol.id, rows: Array.from({ length: count }, (_, i) => ({
      requestId: i === 0 ? '=cmd|calc' : `req_bulk_${i}`, model: 'bulk-model', kind: 'tokens', quantity: BigInt(i + 1), unit: 'token', amountNano: BigInt(i + 1), details: {},
    })) });
    // Read straight from the store: the ledger's listUsage pages at 500.
    const rows = (await t.gw.db.query<{ id: string; request_id: string }>('SELECT id, request_id FROM usage_rows WHERE account_id = $1', [carol.id]))
      .map((r) => ({ id: r.id, requestId: r.request_id })).sort((a, b) => (a.id < b.id ? 1 : -1));
    expect(rows).toHaveLength(count);
    const page = await carol.client.get('/console/usage');
    expect(listedIds(page.text)).toEqual(rows.slice(0, 200).map((r) => r.id));
    expect(page.text).toContain('Showing the newest 200 matching rows; more match.');
    const csv = parseCsv((await carol.client.get('/console/usage.csv')).text).slice(1);
    expect(csv.map((l) => l[0])).toEqual(rows.map((r) => r.id));
    expect(csv.find((l) => l[0] === rows.find((r) => r.requestId === '=cmd|calc')!.id)![9]).toBe("'=cmd|calc");
    const few = await carol.client.get('/console/usage?model=nope');
    expect(few.text).not.toContain('more match');
  });
});
