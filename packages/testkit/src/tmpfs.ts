import { execFileSync } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';

/**
 * A small real file system for tests of a full disk: a tmpfs of `size` (mount's syntax, e.g. `512k`,
 * `2m`) mounted on the existing empty folder `dir`. Needs root (these machines run the tests as root).
 */
export interface SmallDisk {
  readonly path: string;
  /**
   * Fills the file system with a file `filler` but for nothing and answers the filler's path (delete
   * it to give the space back). Writing stops at ENOSPC; any other error is thrown.
   */
  fill(): Promise<string>;
  /** Lazily, so that files a failed test left open do not keep it mounted. */
  unmount(): void;
}

export function mountSmallDisk(dir: string, size: string): SmallDisk {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return {
    path: dir,
    fill: () => fillFileSystem(dir),
    unmount: () => execFileSync('umount', ['-l', dir]),
  };
}

/** Fills the file system holding `dir` but for nothing (see `SmallDisk.fill`). */
export async function fillFileSystem(dir: string): Promise<string> {
  const filler = path.join(dir, 'filler');
  const handle = await open(filler, 'w');
  try {
    const chunk = Buffer.alloc(4096, 1);
    try {
      for (;;) await handle.write(chunk);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
    // The last partial block too.
    try {
      for (;;) await handle.write(Buffer.alloc(1, 1));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  } finally {
    await handle.close();
  }
  return filler;
}
