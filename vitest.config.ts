import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The workspace packages (packages/*) are tested from their TypeScript source: their exports
  // map a `tollbook-source` condition to src/ (dist/ is for consumers). The rest are Vite's
  // default server conditions, which setting this list replaces.
  ssr: { resolve: { conditions: ['tollbook-source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One worker process per core; test files in a worker share its embedded database (each
    // test makes its own users and spaces, so they do not see each other's rows).
    pool: 'forks',
    isolate: false,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
