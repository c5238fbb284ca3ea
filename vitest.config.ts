import { defineConfig } from 'vitest/config';

// One root run covers every workspace: each services/* and packages/* folder with its own
// vitest.config.ts is a project. The JSON report feeds the one-line summary printed by .ci/run.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.ts', 'services/*/vitest.config.ts'],
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
