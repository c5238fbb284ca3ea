import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** Sources tsc compiles and notes for readers; everything else under `src/` is an asset the code reads at run time. */
const NOT_ASSET = /\.(ts|tsx|mts|cts|md)$/;

/**
 * Copies the non-TypeScript files of `src/` (SQL migrations, proto files...) to the same place under
 * `dist/`, so a path the code builds from `import.meta.url` finds them from the compiled output too.
 * Returns how many files it copied.
 */
export function copyAssets(projectDir: string): number {
  const src = join(projectDir, 'src');
  const dist = join(projectDir, 'dist');
  if (!existsSync(src)) return 0;
  let copied = 0;
  for (const entry of readdirSync(src, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || NOT_ASSET.test(entry.name)) continue;
    const from = join(entry.parentPath, entry.name);
    const to = join(dist, relative(src, from));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
    copied += 1;
  }
  return copied;
}
