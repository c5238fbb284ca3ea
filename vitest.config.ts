import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One root run covers every workspace: each services/* and packages/* folder with its own
// vitest.config.ts is a project. The JSON report feeds the one-line summary printed by .ci/run.
//
// Workers: vitest's default (one less than the cores) is a single worker on the 2-core machines CI
// runs on, so every file ran alone, while most of a process test's time is waiting: on child
// processes starting, on PostgreSQL, on timers. Three workers keep both cores busy. Every test
// takes its ports, databases and folders fresh (packages/testkit), so files do not meet.
// `npx vitest run --maxWorkers=1` runs them one at a time again.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.ts', 'services/*/vitest.config.ts'],
    maxWorkers: Math.max(3, availableParallelism() - 1),
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
