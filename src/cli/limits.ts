/**
 * `gateway account limits ID` and `gateway key limits ID`: PATCH an account's or a key's rate
 * limits (--rpm, --tpm, --concurrency: a number, or `none` for unlimited; --clear removes the override).
 */
import type { Command, CommandContext } from './command.js';
import { keyValues } from './print.js';

const FLAGS: Array<[string, string]> = [['--rpm', 'requests_per_minute'], ['--tpm', 'tokens_per_minute'], ['--concurrency', 'concurrent_requests']];

function limitsBody(flags: Map<string, string | true>): { limits: Record<string, number | null> | null } {
  if (flags.has('--clear')) return { limits: null };
  const limits: Record<string, number | null> = {};
  for (const [flag, field] of FLAGS) {
    const value = flags.get(flag);
    if (value === undefined) continue;
    if (value === 'none') { limits[field] = null; continue; }
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a positive integer or "none", got ${String(value)}`);
    limits[field] = n;
  }
  if (Object.keys(limits).length === 0) throw new Error('give at least one of --rpm, --tpm, --concurrency, or --clear');
  return { limits };
}

function limitsCommand(noun: 'account' | 'key', path: (id: string) => string): Command {
  return {
    words: [noun, 'limits'], args: [noun === 'account' ? 'ACCOUNT_ID' : 'KEY_ID'], flags: ['--rpm', '--tpm', '--concurrency', '--clear'],
    summary: `set ${noun} rate limits (--rpm/--tpm/--concurrency N|none, or --clear)`,
    async run(ctx: CommandContext, [id], flags) {
      const res: Record<string, unknown> = await ctx.client.call('PATCH', path(id!), limitsBody(flags));
      if (ctx.json) { ctx.io.out(JSON.stringify(res, null, 2) + '\n'); return 0; }
      ctx.io.out(keyValues({ id: res.id, limits: JSON.stringify(res.limits) }));
      return 0;
    },
  };
}

/** The two limits commands. */
export const LIMIT_COMMANDS: Command[] = [
  limitsCommand('account', (id) => `/admin/accounts/${encodeURIComponent(id)}`),
  limitsCommand('key', (id) => `/admin/keys/${encodeURIComponent(id)}`),
];
