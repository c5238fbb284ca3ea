import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProjects } from '../src/build/build.js';
import { isStale } from '../src/build/freshness.js';
import { readProject } from '../src/build/project.js';
import { COMPILED_NODE_FLAGS } from '../src/build/run-compiled.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
// Inside the repository (`.tmp/` is git-ignored) so the shared compiler options and @types/node resolve.
mkdirSync(join(repoRoot, '.tmp'), { recursive: true });
const root = mkdtempSync(join(repoRoot, '.tmp/build-test-'));
const baseConfig = join(repoRoot, 'tsconfig.build.base.json');

// A service whose error's stack line is known (line 3 of server.ts), reading an asset next to its
// module as the exchange reads its migrations; and a package it references, whose change must
// rebuild it.
const SERVER = `import { readFileSync } from 'node:fs';
export function where(): string {
  return new Error('here').stack ?? '';
}
const asset = readFileSync(new URL('./sql/001_first.sql', import.meta.url), 'utf8');
console.log(JSON.stringify({ asset: asset.trim(), stack: where() }));
`;

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function makeProjects(): { service: string; lib: string } {
  const lib = join(root, 'lib');
  write(
    join(lib, 'tsconfig.build.json'),
    JSON.stringify({ extends: baseConfig, compilerOptions: { composite: true } }),
  );
  write(join(lib, 'src/value.ts'), 'export const value = 1;\n');
  const service = join(root, 'service');
  write(
    join(service, 'tsconfig.build.json'),
    JSON.stringify({ extends: baseConfig, references: [{ path: '../lib/tsconfig.build.json' }] }),
  );
  write(join(service, 'src/server.ts'), SERVER);
  write(join(service, 'src/sql/001_first.sql'), 'SELECT 1;\n');
  return { service, lib };
}

/** Sets a file's mtime to now, as an edit made after the last build began (seconds ago) would. */
function touchNow(file: string): void {
  const now = new Date();
  utimesSync(file, now, now);
}

describe('compiled builds', () => {
  const { service, lib } = makeProjects();
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('builds a project missing its output, with its references, source maps and assets', async () => {
    const project = readProject(service);
    expect(project.references.map((r) => r.dir)).toEqual([lib]);
    expect(project.extendsChain).toContain(baseConfig);
    expect(isStale(project)).toBe(true);
    const result = await buildProjects([project], { onlyStale: true });
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
    expect(result.built.map((p) => p.dir)).toEqual([lib, service]);
    for (const file of ['dist/server.js', 'dist/server.js.map', 'dist/sql/001_first.sql']) {
      expect(existsSync(join(service, file)), file).toBe(true);
    }
    expect(existsSync(join(lib, 'dist/value.d.ts'))).toBe(true);
    expect(isStale(project)).toBe(false);
    expect(isStale(readProject(lib))).toBe(false);
  });

  it('runs the output with stack traces pointing at the TypeScript lines and finds its assets', () => {
    const run = spawnSync(process.execPath, [...COMPILED_NODE_FLAGS, join(service, 'dist/server.js')], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    const printed = JSON.parse(run.stdout) as { asset: string; stack: string };
    expect(printed.asset).toBe('SELECT 1;');
    expect(printed.stack).toContain(`${join(service, 'src/server.ts')}:3:`);
  });

  it('does nothing while fresh; rebuilds after a change to its sources, assets or a referenced package', async () => {
    const project = readProject(service);
    expect((await buildProjects([project], { onlyStale: true })).built).toEqual([]);

    touchNow(join(lib, 'src/value.ts'));
    expect(isStale(readProject(service))).toBe(true);
    expect(
      (await buildProjects([readProject(service)], { onlyStale: true })).built.map((p) => p.dir),
    ).toEqual([lib, service]);
    expect(isStale(readProject(service))).toBe(false);

    write(join(service, 'src/sql/001_first.sql'), 'SELECT 2;\n');
    touchNow(join(service, 'src/sql/001_first.sql'));
    expect(isStale(readProject(service))).toBe(true);
    await buildProjects([readProject(service)], { onlyStale: true });
    expect(readFileSync(join(service, 'dist/sql/001_first.sql'), 'utf8')).toBe('SELECT 2;\n');
  });

  it('reports a failed compile with tsc output and leaves the project stale', async () => {
    const file = join(service, 'src/server.ts');
    write(file, `${SERVER}export const broken: number = 'text';\n`);
    touchNow(file);
    const result = await buildProjects([readProject(service)], { onlyStale: true });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/error TS2322/);
    expect(isStale(readProject(service))).toBe(true);
  });
});
