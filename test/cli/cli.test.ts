import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { startAdmin, type AdminHarness } from '../admin/harness.js';
import { describeStore } from '../helpers/db.js';

interface Result { code: number; out: string; err: string; }

describeStore('gateway CLI', () => {
  let h: AdminHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startAdmin();
    env = { GATEWAY_URL: `${h.url}/`, GATEWAY_ADMIN_TOKEN: h.token };
  });
  afterAll(async () => {
    await h?.close();
  });

  async function cli(argv: string[], withEnv: Record<string, string | undefined> = env): Promise<Result> {
    let out = '';
    let err = '';
    const code = await runCli(argv, withEnv, { out: (s) => void (out += s), err: (s) => void (err += s) });
    return { code, out, err };
  }

  async function createAccount(...flags: string[]): Promise<{ id: string; key: string; key_id: string }> {
    const r = await cli(['account', 'create', ...flags, '--json']);
    expect(r.code).toBe(0);
    return JSON.parse(r.out);
  }

  it('sets and clears account and key rate limits', async () => {
    const account = await createAccount();
    const set = await cli(['account', 'limits', account.id, '--rpm', '60', '--concurrency', 'none', '--json']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out)).toEqual({ id: account.id, limits: { requests_per_minute: 60, concurrent_requests: null } });
    const caller = await h.ledger.authenticate(account.key);
    expect(caller?.accountLimits).toEqual({ requests_per_minute: 60, concurrent_requests: null });
    expect((await cli(['key', 'limits', account.key_id, '--tpm', '1000'])).code).toBe(0);
    expect((await h.ledger.authenticate(account.key))?.keyLimits).toEqual({ tokens_per_minute: 1000 });
    expect((await cli(['key', 'limits', account.key_id, '--clear'])).code).toBe(0);
    expect((await h.ledger.authenticate(account.key))?.keyLimits).toBeNull();
    expect((await cli(['account', 'limits', account.id, '--rpm', 'lots'])).code).toBe(1);
    expect((await cli(['account', 'limits', account.id, '--bogus', '1'])).code).toBe(2);
  });

  it('creates an account, tops it up and shows it', async () => {
    const text = await cli(['account', 'create', '--balance', '10', '--credit-limit=0.5']);
    expect(text.code).toBe(0);
    const id = /^account\s+(\S+)$/m.exec(text.out)![1]!;
    expect(text.out).toMatch(/^key\s+gw-\S+$/m);
    expect(text.err).toContain('not shown again');

    const topup = await cli(['account', 'topup', id, '2.25']);
    expect(topup.code).toBe(0);
    expect(topup.out).toMatch(/^balance_usd\s+12\.25$/m);
    const shown = await cli(['account', 'show', id, '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toEqual({ id, balance_usd: '12.25', credit_limit_usd: '0.5', held_usd: '0', granted_usd: '0', open_holds: 0 });

    const bad = await cli(['account', 'topup', id, '-1']);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/400 invalid_amount/);
  });

  it('lists usage with paging, --all, and refunds once', async () => {
    const { id } = await createAccount('--balance', '5');
    const rows = await h.charge(id, [1n, 2n, 3n]);
    const page = await cli(['usage', id, '--limit', '2']);
    expect(page.code).toBe(0);
    expect(page.out).toContain('AMOUNT_USD');
    expect(page.out).toContain(rows[2]!.id);
    expect(page.out).not.toContain(rows[0]!.id);
    expect(page.out).toContain(`--after ${rows[1]!.id}`);
    const rest = await cli(['usage', id, '--after', rows[1]!.id, '--json']);
    expect(JSON.parse(rest.out)).toMatchObject({ data: [{ id: rows[0]!.id }], next: null });
    const all = await cli(['usage', id, '--limit=1', '--all', '--json']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.out).data.map((r: { id: string }) => r.id)).toEqual(rows.map((r) => r.id).reverse());

    const refund = await cli(['refund', rows[0]!.id]);
    expect(refund.code).toBe(0);
    expect(refund.out).toMatch(/^kind\s+refund$/m);
    const again = await cli(['refund', rows[0]!.id]);
    expect(again.code).toBe(1);
    expect(again.err).toContain('409 already_refunded');
    expect(again.err).toContain('already refunded');

    const missing = await cli(['usage', 'acct_nope']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('account acct_nope not found');
  });

  it('manages keys', async () => {
    const { id, key, key_id } = await createAccount();
    const created = await cli(['key', 'create', id, '--json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.out).key).toMatch(/^gw-/);
    const rotated = await cli(['key', 'rotate', key_id, '--json']);
    expect(rotated.code).toBe(0);
    expect(await h.ledger.authenticate(key)).toBeNull();
    const deleted = await cli(['key', 'delete', JSON.parse(rotated.out).id]);
    expect(deleted).toMatchObject({ code: 0, out: `deleted ${JSON.parse(rotated.out).id}\n` });
    expect((await cli(['key', 'delete', 'key_nope'])).code).toBe(1);
  });

  it('creates a key with controls, shows them and what it spent, changes and clears them (issue 33 item 2)', async () => {
    const { id } = await createAccount('--balance', '1');
    const created = await cli(['key', 'create', id, '--name', 'ci', '--budget', '0.5', '--period', 'day', '--models', 'gpt-4o*, claude-haiku-4-5', '--expires', '2030-01-01T00:00:00Z', '--json']);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key).toMatchObject({ name: 'ci', budget_usd: '0.5', budget_period: 'day', allowed_models: ['gpt-4o*', 'claude-haiku-4-5'], expires_at: '2030-01-01T00:00:00.000Z', spent_usd: '0', held_usd: '0' });
    const shown = await cli(['key', 'show', key.id]);
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/^budget_usd\s+0\.5$/m);
    expect(shown.out).toMatch(/^period_start\s+\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/m);
    const set = await cli(['key', 'set', key.id, '--budget', 'none', '--models', 'none', '--json']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ budget_usd: null, budget_period: null, allowed_models: null, expires_at: '2030-01-01T00:00:00.000Z' });
    expect((await h.ledger.authenticate(key.key))?.controls).toEqual({ budgetNano: null, budgetPeriod: null, allowedModels: null, expiresAt: new Date('2030-01-01T00:00:00Z') });
    expect((await cli(['key', 'set', key.id])).code).toBe(1);
    expect((await cli(['key', 'create', id, '--budget', 'none'])).code).toBe(1);
    expect((await cli(['key', 'set', key.id, '--budget', '2'])).code).toBe(1);
  });

  it('reconciles: exit 0 when the books balance, 1 after tampering', async () => {
    const { id } = await createAccount('--balance', '1');
    await h.charge(id, [5n]);
    const ok = await cli(['reconcile']);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('DIFFERENCE');
    expect(ok.out).toMatch(/^ok: \d+ account\(s\) reconcile$/m);
    expect((await cli(['sweep'])).out).toMatch(/^released \d+ expired hold\(s\)$/m);

    await h.db.query('UPDATE accounts SET balance_nano = balance_nano + 1 WHERE id = $1', [id]);
    const bad = await cli(['reconcile']);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('MISMATCH: 1 of');
    expect(bad.out).toContain('-0.000000001');
    const badJson = await cli(['reconcile', '--json']);
    expect(badJson.code).toBe(1);
    expect(JSON.parse(badJson.out).ok).toBe(false);
    await h.db.query('UPDATE accounts SET balance_nano = balance_nano - 1 WHERE id = $1', [id]);
    expect((await cli(['reconcile'])).code).toBe(0);
  });

  it('prints help, and exits 2 on usage errors', async () => {
    for (const argv of [['help'], ['--help'], ['usage', '--help']]) {
      const r = await cli(argv, {});
      expect(r.code).toBe(0);
      expect(r.out).toContain('gateway account create [--balance USD] [--credit-limit USD]');
    }
    const bad = [
      [], ['bogus'], ['account'], ['account', 'bogus'], ['account', 'show'], ['account', 'show', 'a', 'b'],
      ['reconcile', '--bogus'], ['reconcile', '--all'], ['usage', 'a', '--limit', '0'], ['usage', 'a', '--limit', 'x'],
      ['account', 'create', '--balance'], ['sweep', '--json=1'], ['help', 'me'], ['account', 'show', ''],
    ];
    for (const argv of bad) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain('Usage:');
    }
  });

  it('reports configuration and HTTP errors with exit 1', async () => {
    const noToken = await cli(['reconcile'], { GATEWAY_URL: h.url });
    expect(noToken.code).toBe(1);
    expect(noToken.err).toContain('GATEWAY_ADMIN_TOKEN is not set');
    const wrong = await cli(['reconcile'], { GATEWAY_URL: h.url, GATEWAY_ADMIN_TOKEN: 'wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('401 invalid_admin_token');
    const badUrl = await cli(['reconcile'], { GATEWAY_URL: 'not a url', GATEWAY_ADMIN_TOKEN: 'x' });
    expect(badUrl.code).toBe(1);
    const down = await cli(['reconcile'], { GATEWAY_URL: 'http://127.0.0.1:1', GATEWAY_ADMIN_TOKEN: 'x' });
    expect(down.code).toBe(1);
    expect(down.err).toContain('cannot reach the gateway');
    const missing = await cli(['account', 'show', 'acct_nope']);
    expect(missing).toMatchObject({ code: 1, out: '' });
    expect(missing.err).toContain('account acct_nope not found');
  });
});
