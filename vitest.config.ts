import { defineConfig } from 'vitest/config';

// Every test file runs twice: once on embedded PGlite, once on a PostgreSQL server
// (test/helpers/db.ts reads GATEWAY_TEST_STORE; see describeStore for the unreachable-server rule).
const include = ['test/**/*.test.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: 'pglite', include, env: { GATEWAY_TEST_STORE: 'pglite' }, testTimeout: 30_000, hookTimeout: 30_000 },
      },
      {
        test: {
          name: 'postgres',
          include,
          env: { GATEWAY_TEST_STORE: 'postgres' },
          testTimeout: 30_000,
          hookTimeout: 30_000,
          pool: 'forks',
        },
      },
    ],
  },
});
