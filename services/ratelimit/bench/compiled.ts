import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
// The launcher's own build steps (relative: the bench is not a launcher dependent, no lock change).
import { buildProjects } from '../../../packages/launcher/src/build/build.js';
import { readProject } from '../../../packages/launcher/src/build/project.js';
import { readServiceSpec } from '../../../packages/launcher/src/discover.js';
import { nodeArguments } from '../../../packages/launcher/src/launch-mode.js';

/**
 * The benchmark runs everything as plain compiled JavaScript, as the launcher runs the service, so
 * peak RSS compares like with like (no tsx loader in any process): the service from `dist/`
 * (rebuilt first when stale) and the anchor transpiled to `bench/dist/`.
 */
export const SERVICE = join(import.meta.dirname, '..');
/** The shared rate-limit .proto files, for the anchor. */
export { RATELIMIT_PROTO_DIR as PROTO_DIR } from '@platform/ratelimit-proto/dir';

const ANCHOR_SOURCE = join(SERVICE, 'bench', 'anchor-server.ts');
const ANCHOR_OUT = join(SERVICE, 'bench', 'dist', 'anchor-server.js');

/** Builds the service (and what it references) when its `dist/` is missing or older than its sources. */
export async function ensureServiceBuilt(): Promise<void> {
  const result = await buildProjects([readProject(SERVICE)], { onlyStale: true });
  if (!result.ok) throw new Error(`build of the service failed:\n${result.output}`);
  if (result.built.length > 0) process.stderr.write(`bench: built ${result.built.length} project(s)\n`);
}

/** Transpiles the anchor (one file, no type check: the repository's typecheck covers it) when stale. */
export function ensureAnchorBuilt(): string {
  const fresh = (() => {
    try {
      return statSync(ANCHOR_OUT).mtimeMs >= statSync(ANCHOR_SOURCE).mtimeMs;
    } catch {
      return false;
    }
  })();
  if (!fresh) {
    const { outputText } = ts.transpileModule(readFileSync(ANCHOR_SOURCE, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: ANCHOR_SOURCE,
    });
    mkdirSync(join(SERVICE, 'bench', 'dist'), { recursive: true });
    writeFileSync(ANCHOR_OUT, outputText);
  }
  return ANCHOR_OUT;
}

/**
 * Node arguments running the compiled service entry as the launcher runs it (with the service's
 * `platform.nodeFlags`), then `extra` before the entry (later flags win, so they can override).
 */
export function serviceNodeArgs(extra: readonly string[] = []): string[] {
  const spec = readServiceSpec(SERVICE);
  if (spec === undefined) throw new Error(`${SERVICE} has no runnable platform field`);
  const args = nodeArguments(spec, 'compiled');
  return [...args.slice(0, -1), ...extra, ...args.slice(-1)];
}
