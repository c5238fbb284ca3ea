import { join, relative } from 'node:path';

/**
 * The package-exports condition that points `@platform/*` imports at `dist/*.js`. Without it they
 * resolve to `src/*.ts` (the `default`), which is what tsx, vitest and the type checker want, so only
 * the compiled run has to say anything.
 */
export const COMPILED_CONDITION = 'platform-compiled';

/** Node flags of every compiled run: stack traces through the source maps point at the .ts lines. */
export const COMPILED_NODE_FLAGS = ['--enable-source-maps', `--conditions=${COMPILED_CONDITION}`];

/** `src/server.ts` of a project becomes `dist/server.js`. */
export function compiledEntry(projectDir: string, sourceEntry: string): string {
  const inSrc = relative(join(projectDir, 'src'), sourceEntry);
  if (inSrc.startsWith('..'))
    throw new Error(`${sourceEntry} is not under ${projectDir}/src, so it has no compiled form`);
  return join(projectDir, 'dist', inSrc.replace(/\.(m|c)?tsx?$/, '.js'));
}
