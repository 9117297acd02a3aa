/** The CLI commands: each maps to one admin API call (usage --all follows pages) and prints the answer. */
import type { Command, CommandContext } from './command.js';
import { LIMIT_COMMANDS } from './limits.js';
import { KEY_CONTROL_COMMANDS } from './key-controls.js';
import { cell, keyValues, table } from './print.js';

export type { CliIo, Command, CommandContext } from './command.js';

interface UsageRowJson {
  id: string;
  key_id: string | null;
  request_id: string;
  model: string;
  kind: string;
  quantity: number;
  unit: string;
  amount_usd: string;
  refund_of: string | null;
  created_at: string;
}

interface UsagePage { data: UsageRowJson[]; next: string | null; }

interface ReconcileJson {
  ok: boolean;
  accounts: Array<Record<string, string>>;
}

const seg = encodeURIComponent;

/** Prints the raw JSON, or the text rendering. */
function show(ctx: CommandContext, value: unknown, text: () => string): number {
  ctx.io.out(ctx.json ? JSON.stringify(value, null, 2) + '\n' : text());
  return 0;
}

function flagValue(flags: Map<string, string | true>, name: string): string | undefined {
  const v = flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

async function usage(ctx: CommandContext, args: string[], flags: Map<string, string | true>): Promise<number> {
  const limit = flagValue(flags, '--limit');
  const key = flagValue(flags, '--key');
  let after = flagValue(flags, '--after');
  const all = flags.has('--all');
  const rows: UsageRowJson[] = [];
  let next: string | null = null;
  do {
    const query = new URLSearchParams();
    if (limit !== undefined) query.set('limit', limit);
    if (key !== undefined) query.set('key_id', key);
    if (after !== undefined) query.set('after', after);
    const qs = query.size ? `?${query}` : '';
    const page: UsagePage = await ctx.client.call('GET', `/admin/accounts/${seg(args[0]!)}/usage${qs}`);
    rows.push(...page.data);
    next = page.next;
    after = next ?? undefined;
  } while (all && next !== null);
  return show(ctx, { data: rows, next }, () => {
    if (!rows.length) return 'no usage rows\n';
    const header = ['ID', 'CREATED_AT', 'KEY_ID', 'REQUEST_ID', 'MODEL', 'KIND', 'QUANTITY', 'UNIT', 'AMOUNT_USD', 'REFUND_OF'];
    const body = rows.map((r) => [
      r.id, r.created_at, cell(r.key_id), r.request_id, r.model, r.kind, String(r.quantity), r.unit, r.amount_usd, cell(r.refund_of),
    ]);
    const more = next ? `more rows: ${key === undefined ? '' : `--key ${key} `}--after ${next} (or --all)\n` : '';
    return table(header, body) + more;
  });
}

async function reconcile(ctx: CommandContext): Promise<number> {
  const result: ReconcileJson = await ctx.client.call('GET', '/admin/reconcile');
  const bad = result.accounts.filter((a) => a.difference_usd !== '0');
  show(ctx, result, () => {
    const cols = ['opening_usd', 'topups_usd', 'balance_usd', 'usage_usd', 'refunds_usd', 'open_holds_usd', 'difference_usd'];
    const header = ['ACCOUNT', ...cols.map((c) => c.replace(/_usd$/, '').toUpperCase())];
    const rows = result.accounts.map((a) => [a.account_id ?? '', ...cols.map((c) => a[c] ?? '')]);
    const summary = result.ok
      ? `ok: ${result.accounts.length} account(s) reconcile\n`
      : `MISMATCH: ${bad.length} of ${result.accounts.length} account(s) do not reconcile\n`;
    return table(header, rows) + summary;
  });
  return result.ok && bad.length === 0 ? 0 : 1;
}

/** Every command, in the order `help` lists them. */
export const COMMANDS: Command[] = [
  {
    words: ['account', 'create'], args: [], flags: ['--balance', '--credit-limit'],
    summary: 'create an account and its first key (the key is shown once)',
    async run(ctx, _args, flags) {
      const body: Record<string, string> = {};
      const balance = flagValue(flags, '--balance');
      const credit = flagValue(flags, '--credit-limit');
      if (balance !== undefined) body.balance_usd = balance;
      if (credit !== undefined) body.credit_limit_usd = credit;
      const res: { id: string; key: string; key_id: string } = await ctx.client.call('POST', '/admin/accounts', body);
      if (!ctx.json) ctx.io.err('Store the key now: it is not shown again.\n');
      return show(ctx, res, () => keyValues({ account: res.id, key_id: res.key_id, key: res.key }));
    },
  },
  {
    words: ['account', 'show'], args: ['ACCOUNT_ID'], flags: [], summary: 'show balance, credit limit and holds',
    async run(ctx, [id]) {
      const res: Record<string, unknown> = await ctx.client.call('GET', `/admin/accounts/${seg(id!)}`);
      return show(ctx, res, () => keyValues(res));
    },
  },
  {
    words: ['account', 'topup'], args: ['ACCOUNT_ID', 'AMOUNT_USD'], flags: [], summary: 'add funds to an account',
    async run(ctx, [id, amount]) {
      const res: Record<string, unknown> = await ctx.client.call('POST', `/admin/accounts/${seg(id!)}/topups`, {
        amount_usd: amount,
      });
      return show(ctx, res, () => keyValues(res));
    },
  },
  ...KEY_CONTROL_COMMANDS,
  {
    words: ['key', 'rotate'], args: ['KEY_ID'], flags: [], summary: 'replace a key; the old one stops working',
    async run(ctx, [id]) {
      const res: Record<string, unknown> = await ctx.client.call('POST', `/admin/keys/${seg(id!)}/rotate`);
      return show(ctx, res, () => keyValues(res));
    },
  },
  {
    words: ['key', 'delete'], args: ['KEY_ID'], flags: [], summary: 'revoke a key',
    async run(ctx, [id]) {
      await ctx.client.call('DELETE', `/admin/keys/${seg(id!)}`);
      return show(ctx, { id, deleted: true }, () => `deleted ${id}\n`);
    },
  },
  ...LIMIT_COMMANDS,
  {
    words: ['usage'], args: ['ACCOUNT_ID'], flags: ['--limit', '--after', '--key', '--all'],
    summary: 'list usage rows, newest first (--key: one key\'s only; --all follows every page)', run: usage,
  },
  {
    words: ['refund'], args: ['ROW_ID'], flags: [], summary: 'refund one usage row (once)',
    async run(ctx, [id]) {
      const res: Record<string, unknown> = await ctx.client.call('POST', `/admin/usage/${seg(id!)}/refund`);
      return show(ctx, res, () => keyValues(res));
    },
  },
  {
    words: ['reconcile'], args: [], flags: [], summary: 'check the books; exit 1 on any difference',
    run: (ctx) => reconcile(ctx),
  },
  {
    words: ['sweep'], args: [], flags: [], summary: 'release expired holds',
    async run(ctx) {
      const res: { released: number } = await ctx.client.call('POST', '/admin/holds/sweep');
      return show(ctx, res, () => `released ${res.released} expired hold(s)\n`);
    },
  },
];
