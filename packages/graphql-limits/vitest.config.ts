import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'graphql-limits',
    include: ['test/**/*.test.ts'],
  },
});
