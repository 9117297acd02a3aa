/**
 * The `gateway` CLI over the admin API: hand-parsed argv, one command per call. Exit codes: 0 ok,
 * 1 server/network error or reconcile mismatch, 2 usage error.
 */
import { COMMANDS, type CliIo, type Command } from './commands.js';
import { AdminClient, HttpError } from './http.js';

export type { CliIo } from './commands.js';

/** Default admin server. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

const VALUE_FLAGS = new Set(['--balance', '--credit-limit', '--limit', '--after', '--key', '--rpm', '--tpm', '--concurrency', '--name', '--budget', '--period', '--models', '--expires']);
/** What the usage text shows after a value flag (anything else: USD). */
const PLACEHOLDERS: Record<string, string> = {
  '--limit': 'N', '--after': 'ROW_ID', '--key': 'KEY_ID',
  '--name': 'NAME', '--period': 'day|month|total', '--models': 'ID,PATTERN*', '--expires': 'TIME',
};
const GLOBAL_FLAGS = new Set(['--json', '--help', '-h']);
const BOOL_FLAGS = new Set([...GLOBAL_FLAGS, '--all', '--clear']);

/** The usage text. */
export function usageText(): string {
  const lines = COMMANDS.map((c) => {
    const flags = c.flags.map((f) => (VALUE_FLAGS.has(f) ? `[${f} ${PLACEHOLDERS[f] ?? 'USD'}]` : `[${f}]`));
    return [`gateway ${[...c.words, ...c.args, ...flags].join(' ')}`, c.summary];
  });
  lines.push(['gateway help | --help', 'show this text']);
  const width = Math.max(...lines.map(([l]) => l!.length));
  return [
    'Usage:',
    ...lines.map(([l, s]) => `  ${l!.padEnd(width)}  ${s}`),
    '',
    'Options:',
    '  --json  print the raw JSON answer',
    '',
    'Environment:',
    `  GATEWAY_URL          admin server (default ${DEFAULT_URL})`,
    '  GATEWAY_ADMIN_TOKEN  admin bearer token (required)',
    '',
  ].join('\n');
}

class UsageError extends Error {}

interface Parsed {
  positionals: string[];
  flags: Map<string, string | true>;
}

/** Splits argv into positionals and flags (`--flag value`, `--flag=value`; `--` ends flags). */
function parseArgv(argv: string[]): Parsed {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    // Negative amounts ("-5") are values, not flags.
    if (!arg.startsWith('-') || /^-\d/.test(arg) || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (VALUE_FLAGS.has(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      flags.set(name, value);
    } else if (BOOL_FLAGS.has(name) && eq < 0) {
      flags.set(name, true);
    } else {
      throw new UsageError(`unknown option ${arg}`);
    }
  }
  return { positionals, flags };
}

function findCommand(positionals: string[]): Command {
  const command = COMMANDS.find((c) => c.words.every((w, i) => positionals[i] === w));
  if (!command) {
    const words = positionals.slice(0, 2).join(' ');
    throw new UsageError(words ? `unknown command: ${words}` : 'missing command');
  }
  return command;
}

function checkUsage(command: Command, parsed: Parsed): string[] {
  const name = command.words.join(' ');
  const args = parsed.positionals.slice(command.words.length);
  if (args.length < command.args.length) throw new UsageError(`${name}: missing ${command.args.slice(args.length).join(' ')}`);
  if (args.length > command.args.length) throw new UsageError(`${name}: unexpected argument ${args[command.args.length]}`);
  if (args.some((a) => a === '')) throw new UsageError(`${name}: empty argument`);
  for (const flag of parsed.flags.keys()) {
    if (!GLOBAL_FLAGS.has(flag) && !command.flags.includes(flag)) throw new UsageError(`${name}: unknown option ${flag}`);
  }
  const limit = parsed.flags.get('--limit');
  if (typeof limit === 'string' && !/^[1-9]\d{0,5}$/.test(limit)) throw new UsageError('--limit must be a positive integer');
  return args;
}

/**
 * Runs the CLI: `argv` without the node and script paths, `env` for GATEWAY_URL / GATEWAY_ADMIN_TOKEN.
 * Resolves to the exit code; never throws.
 */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  let command: Command;
  let args: string[];
  let parsed: Parsed;
  try {
    parsed = parseArgv(argv);
    if (parsed.flags.has('--help') || parsed.flags.has('-h') || (parsed.positionals[0] === 'help' && parsed.positionals.length === 1)) {
      io.out(usageText());
      return 0;
    }
    command = findCommand(parsed.positionals);
    args = checkUsage(command, parsed);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`gateway: ${err.message}\n\n${usageText()}`);
    return 2;
  }
  const token = env.GATEWAY_ADMIN_TOKEN;
  if (!token) {
    io.err('gateway: GATEWAY_ADMIN_TOKEN is not set; export the admin token of the gateway you are managing\n');
    return 1;
  }
  const url = env.GATEWAY_URL || DEFAULT_URL;
  let client: AdminClient;
  try {
    client = new AdminClient(url, token);
  } catch {
    io.err(`gateway: GATEWAY_URL is not a valid URL: ${url}\n`);
    return 1;
  }
  try {
    return await command.run({ client, io, json: parsed.flags.has('--json') }, args, parsed.flags);
  } catch (err) {
    if (err instanceof HttpError) {
      const where = err.status ? ` (${err.status}${err.code ? ` ${err.code}` : ''})` : '';
      io.err(`gateway: error${where}: ${err.message}\n`);
      return 1;
    }
    io.err(`gateway: unexpected error: ${(err as Error).message}\n`);
    return 1;
  }
}
