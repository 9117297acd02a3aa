#!/usr/bin/env node
/** The `gateway` admin CLI entry point (package bin): runs {@link runCli} on process.argv. */
import { runCli } from './run.js';

const code = await runCli(process.argv.slice(2), process.env, {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
});
process.exitCode = code;
