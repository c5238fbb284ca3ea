import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'decimal-text',
    include: ['test/**/*.test.ts'],
  },
});
