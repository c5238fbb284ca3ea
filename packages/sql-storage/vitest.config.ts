import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'sql-storage',
    include: ['test/**/*.test.ts'],
    // Opening an embedded (WebAssembly) PostgreSQL took over 5 s on a loaded CI machine; as the other workspaces.
    testTimeout: 30_000,
  },
});
