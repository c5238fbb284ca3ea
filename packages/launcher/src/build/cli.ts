import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, resolveFormat } from '@platform/logging/logger';
import { parseLogSettings } from '@platform/logging/settings';
import { buildProjects } from './build.js';
import { type BuildProject, isCompilable, readProject } from './project.js';

/**
 * `npm run build`: compiles workspaces to `dist/` (JavaScript, source maps, assets).
 *
 *   build                 the workspace in the current folder (a workspace's own `npm run build`)
 *   build DIR...          those workspaces
 *   build --all           every workspace under packages/ and services/ with a tsconfig.build.json
 *   --if-stale            only when the output is missing or older than the sources (`npm start`)
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * The build's own lines go to stderr; off a terminal (or with LOG_FORMAT=json) they are JSON lines of
 * `service: "launcher"` like the rest of `npm start`'s output, so a collector reads one stream.
 */
function report(message: string, level: 'info' | 'error' = 'info'): void {
  let format: 'json' | 'pretty';
  try {
    format = resolveFormat(parseLogSettings(process.env).format, process.stderr);
  } catch {
    format = 'pretty';
  }
  if (format === 'pretty') {
    process.stderr.write(`${message}\n`);
    return;
  }
  createLogger({ service: 'launcher', level: 'info', format: 'json', destination: process.stderr })[level](
    message,
  );
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { all: { type: 'boolean', default: false }, 'if-stale': { type: 'boolean', default: false } },
});

function allWorkspaces(): string[] {
  return ['packages', 'services'].flatMap((group) =>
    readdirSync(join(repoRoot, group))
      .sort()
      .map((name) => join(repoRoot, group, name))
      .filter(isCompilable),
  );
}

const dirs = values.all
  ? allWorkspaces()
  : positionals.length > 0
    ? positionals.map((p) => resolve(p))
    : [process.cwd()];
const missing = dirs.filter((dir) => !isCompilable(dir));
if (missing.length > 0) {
  report(`build: no tsconfig.build.json in ${missing.join(', ')}`, 'error');
  process.exit(2);
}

const seen = new Map<string, BuildProject>();
const result = await buildProjects(
  dirs.map((dir) => readProject(dir, seen)),
  { onlyStale: values['if-stale'] },
);
if (!result.ok) {
  process.stderr.write(result.output);
  report('build: tsc failed', 'error');
  process.exit(1);
}
if (result.built.length > 0) {
  report(`build: ${result.built.map((p) => p.dir.replace(`${repoRoot}/`, '')).join(', ')}`);
}
