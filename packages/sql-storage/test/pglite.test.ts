import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPglite } from '../src/pglite.js';

describe('embedded database directory lock', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const dataDir = () => {
    root = mkdtempSync(path.join(tmpdir(), 'sql-storage-'));
    return path.join(root, 'pgdata');
  };

  it('refuses a directory another live process holds, naming it', async () => {
    const dir = dataDir();
    writeFileSync(`${dir}.pid`, String(process.ppid));
    await expect(openPglite(dir)).rejects.toThrow(`in use by process ${process.ppid}`);
  });

  it('takes over the lock of a process that is gone and gives it back on close', async () => {
    const dir = dataDir();
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(`${dir}.pid`, String(gone));
    const db = await openPglite(dir);
    expect(JSON.parse(readFileSync(`${dir}.pid`, 'utf8')).pid).toBe(process.pid);
    expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
    await db.close();
    expect(existsSync(`${dir}.pid`)).toBe(false);
  }, 120_000);
});
