import { COMPILED_NODE_FLAGS, compiledEntry } from './build/run-compiled.js';
import type { ServiceSpec } from './discover.js';

/**
 * How the launcher runs a service:
 * - `compiled`: `node` on `dist/` with source maps (the default; built first when stale);
 * - `tsx`: the sources through the tsx loader (a service without a tsconfig.build.json);
 * - `watch`: `tsx watch` on the sources, restarted on every change (`npm run dev`).
 */
export type LaunchMode = 'compiled' | 'tsx' | 'watch';

// Resolved once from the launcher's own dependencies, so a service starts whatever the cwd is.
// Resolving does not load tsx: a compiled run never does.
const TSX_LOADER = import.meta.resolve('tsx');
const TSX_CLI = new URL(import.meta.resolve('tsx/cli')).pathname;

/** The arguments of `node` (process.execPath) that run the service in that mode. */
export function nodeArguments(spec: ServiceSpec, mode: LaunchMode): string[] {
  switch (mode) {
    case 'compiled':
      return [...COMPILED_NODE_FLAGS, ...spec.nodeFlags, compiledEntry(spec.dir, spec.entry)];
    case 'tsx':
      return [...spec.nodeFlags, '--import', TSX_LOADER, spec.entry];
    case 'watch':
      // The launcher interleaves every service's lines: a cleared screen would wipe the others'.
      // Node flags would apply to the tsx watcher, not to the service it restarts: left out.
      return [TSX_CLI, 'watch', '--clear-screen=false', spec.entry];
  }
}
