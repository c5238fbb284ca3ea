import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { copyAssets } from './assets.js';
import { isStale, markBuilt } from './freshness.js';
import { type BuildProject, closure } from './project.js';

// The repository's TypeScript, whatever the working directory of the caller.
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

export interface BuildResult {
  ok: boolean;
  /** The projects compiled (dependencies included), empty when everything was fresh. */
  built: BuildProject[];
  /** What tsc printed, for the caller to show when the build failed. */
  output: string;
}

function runTsc(configs: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSC, '--build', ...configs], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/**
 * Compiles the given projects and the projects they reference with one `tsc --build` (which orders
 * them and skips what is up to date), then copies each one's assets into its `dist/`.
 * With `onlyStale`, projects whose output is newer than every input are left alone, and nothing runs
 * when all are fresh (the cheap path of `npm start`).
 */
export async function buildProjects(
  roots: BuildProject[],
  options: { onlyStale: boolean },
): Promise<BuildResult> {
  const targets = options.onlyStale ? roots.filter(isStale) : roots;
  if (targets.length === 0) return { ok: true, built: [], output: '' };
  const startedAt = Date.now();
  const { code, output } = await runTsc(targets.map((t) => t.config));
  if (code !== 0) return { ok: false, built: [], output };
  const built = closure(targets);
  for (const project of built) {
    copyAssets(project.dir);
    markBuilt(project, startedAt);
  }
  return { ok: true, built, output };
}
