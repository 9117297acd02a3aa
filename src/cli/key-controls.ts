/**
 * Key commands with per-key controls (issue 33 item 2): `key create ACCOUNT_ID`, `key show KEY_ID`
 * and `key set KEY_ID`, with --name, --budget USD, --period day|month|total, --models a,b*,
 * --expires RFC3339; on `key set`, `none` clears a control (--budget none clears its period too).
 */
import type { Command, CommandContext } from './command.js';
import { keyValues } from './print.js';

/** The flags every control command takes. */
const CONTROL_FLAGS = ['--budget', '--period', '--models', '--expires'];

function text(flags: Map<string, string | true>, name: string): string | undefined {
  const v = flags.get(name);
  if (v === true) throw new Error(`${name} needs a value`);
  return v;
}

/** The body's control fields from the flags; `none` is null (clear) when `clearing` is allowed. */
export function controlsBody(flags: Map<string, string | true>, clearing: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const value = (name: string): string | null | undefined => {
    const v = text(flags, name);
    if (v === 'none') {
      if (!clearing) throw new Error(`${name} none only clears a control of an existing key (key set)`);
      return null;
    }
    return v;
  };
  const budget = value('--budget');
  const period = value('--period');
  const models = value('--models');
  const expires = value('--expires');
  if (budget !== undefined) body.budget_usd = budget;
  if (period !== undefined) body.budget_period = period;
  if (models !== undefined) body.allowed_models = models === null ? null : models.split(',').map((m) => m.trim()).filter((m) => m !== '');
  if (expires !== undefined) body.expires_at = expires;
  return body;
}

function shown(ctx: CommandContext, res: Record<string, unknown>): number {
  ctx.io.out(ctx.json ? JSON.stringify(res, null, 2) + '\n' : keyValues(res));
  return 0;
}

const seg = encodeURIComponent;

/** key create, key show, key set. */
export const KEY_CONTROL_COMMANDS: Command[] = [
  {
    words: ['key', 'create'], args: ['ACCOUNT_ID'], flags: ['--name', ...CONTROL_FLAGS],
    summary: 'issue another key (shown once); --name, --budget USD --period day|month|total, --models a,b*, --expires TIME',
    async run(ctx, [id], flags) {
      const body = controlsBody(flags, false);
      const name = text(flags, '--name');
      if (name !== undefined) body.name = name;
      const res: Record<string, unknown> = await ctx.client.call('POST', `/admin/accounts/${seg(id!)}/keys`, body);
      if (!ctx.json) ctx.io.err('Store the key now: it is not shown again.\n');
      return shown(ctx, res);
    },
  },
  {
    words: ['key', 'show'], args: ['KEY_ID'], flags: [], summary: "show a key's controls and what it spent in its budget period",
    async run(ctx, [id]) {
      return shown(ctx, await ctx.client.call('GET', `/admin/keys/${seg(id!)}`));
    },
  },
  {
    words: ['key', 'set'], args: ['KEY_ID'], flags: CONTROL_FLAGS,
    summary: "change a key's controls (--budget/--period/--models/--expires VALUE, or none to clear)",
    async run(ctx, [id], flags) {
      const body = controlsBody(flags, true);
      if (Object.keys(body).length === 0) throw new Error(`give at least one of ${CONTROL_FLAGS.join(', ')}`);
      return shown(ctx, await ctx.client.call('PATCH', `/admin/keys/${seg(id!)}`, body));
    },
  },
];
