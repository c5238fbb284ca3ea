import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'launcher',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The launcher's files one at a time (the root config runs three files at once): once, with
    // launcher.test.ts and launcher.preflight.test.ts running together, the first one's launcher
    // ended at once without a line of output (not understood; never seen with the files apart).
    maxWorkers: 1,
  },
});
