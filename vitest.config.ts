import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Tests that touch a store run twice: once on embedded PGlite, once on a PostgreSQL server
// (test/helpers/db.ts reads GATEWAY_TEST_STORE; see describeStore for the unreachable-server rule).
// Store-independent tests (parsers, translators, codegen, the simulator) run once, in the pglite project.
const everything = ['test/**/*.test.ts'];
const immediateBound = ['test/e2e/{concurrency,store-outage,scale-out,money-errors,openai-sdk,crash,long-stream,faults,grants-*}.test.ts'];
const storeBound = ['test/{e2e,ledger,store,admin,cli,console,jobs,alerts}/**/*.test.ts', 'test/config/reload.test.ts'];

export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: one worker on CI's two. The suite mostly
    // waits on its servers (gateways, simulators, PostgreSQL): with two workers it ran in 19 minutes
    // here (2026-12-04), where CI's run with one took 36 in all; larger machines keep the default.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One migrated in-memory store, dumped once, that every in-memory test store starts from.
    globalSetup: ['test/helpers/global-setup.ts'],
    projects: [
      {
        test: { name: 'pglite', include: everything, env: { GATEWAY_TEST_STORE: 'pglite' }, testTimeout: 30_000, hookTimeout: 60_000 },
      },
      {
        test: {
          name: 'postgres',
          include: storeBound,
          env: { GATEWAY_TEST_STORE: 'postgres' },
          testTimeout: 30_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
      {
        // Credit grants with `post: immediate` (issue 30: every billing, crash, outage and scale-out test
        // passes in both post modes): those tests again, on PostgreSQL, each answer waiting for its post.
        test: {
          name: 'immediate',
          include: immediateBound,
          env: { GATEWAY_TEST_STORE: 'postgres', GATEWAY_GRANTS_POST: 'immediate' },
          testTimeout: 30_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
    ],
  },
});
