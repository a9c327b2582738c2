import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The client package from this checkout's source (node_modules may be another checkout's).
  resolve: {
    alias: {
      '@agent-session-service/client': fileURLToPath(
        new URL('./packages/client/src/index.ts', import.meta.url),
      ),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores here: keep parallelism low so timing-sensitive tails stay honest.
    maxWorkers: 2,
  },
});
