/**
 * The CLI command contract, on its own so that command modules (commands.ts, limits.ts) depend on it
 * and not on each other (issue 9, point 5: no import cycles).
 */
import type { AdminClient } from './http.js';

/** Where a command writes; `out` and `err` get whole chunks ending in a newline. */
export interface CliIo {
  out(s: string): void;
  err(s: string): void;
}

/** What a command runs with. */
export interface CommandContext {
  client: AdminClient;
  io: CliIo;
  json: boolean;
}

/** A command: its words, positional argument names, allowed flags, and body. Returns the exit code. */
export interface Command {
  words: string[];
  args: string[];
  flags: string[];
  summary: string;
  run(ctx: CommandContext, args: string[], flags: Map<string, string | true>): Promise<number>;
}
