import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'http-edge',
    include: ['test/**/*.test.ts'],
  },
});
