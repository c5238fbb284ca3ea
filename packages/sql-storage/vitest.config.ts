import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'sql-storage',
    include: ['test/**/*.test.ts'],
  },
});
