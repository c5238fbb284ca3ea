import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildProject, closure } from './project.js';

/**
 * Written into `dist/` when a build of the project finished (tsc and the asset copy), with its mtime
 * set to when that build began: a source saved while tsc ran is newer than the stamp, so it rebuilds.
 */
const STAMP = '.build-stamp';

/** The newest mtime (ms) of any file under `dir`, 0 when the folder is missing. */
function newestUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

function mtimeOrZero(file: string): number {
  return existsSync(file) ? statSync(file).mtimeMs : 0;
}

/** The newest input of one project alone: its sources, manifest and compiler configs. */
function newestOwnInput(project: BuildProject): number {
  return Math.max(
    newestUnder(join(project.dir, 'src')),
    mtimeOrZero(join(project.dir, 'package.json')),
    mtimeOrZero(project.config),
    ...project.extendsChain.map(mtimeOrZero),
  );
}

/** When the last complete build of the project began, or undefined when it has none. */
function builtAt(project: BuildProject): number | undefined {
  const stamp = join(project.dir, 'dist', STAMP);
  return existsSync(stamp) ? statSync(stamp).mtimeMs : undefined;
}

/**
 * Whether the project's compiled output is missing or older than its sources or those of any
 * project it depends on (an `@platform/*` package changed under a service rebuilds the service).
 */
export function isStale(project: BuildProject): boolean {
  const stamp = builtAt(project);
  if (stamp === undefined) return true;
  return closure([project]).some((p) => newestOwnInput(p) > stamp || (builtAt(p) ?? Infinity) > stamp);
}

/** Records a complete build of the project that began at `startedAtMs`. */
export function markBuilt(project: BuildProject, startedAtMs: number): void {
  const stamp = join(project.dir, 'dist', STAMP);
  writeFileSync(stamp, `${new Date(startedAtMs).toISOString()}\n`);
  const at = new Date(startedAtMs);
  utimesSync(stamp, at, at);
}
