import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processState } from '@platform/testkit/cpu';
import { until } from '@platform/testkit/wait';
import { afterEach, describe, expect, it } from 'vitest';
import { openPglite } from '../src/pglite.js';
import { holderAlive, readHolder } from '../src/process-lock.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const holderScript = path.join(packageDir, 'test/support/hold-pglite.ts');

describe('a restart right after a crash (SIGKILL) takes over the embedded database', () => {
  let root: string | undefined;
  let reaper: ChildProcess | undefined;
  afterEach(() => {
    if (reaper?.pid && reaper.exitCode === null) reaper.kill('SIGKILL');
    reaper = undefined;
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('refuses while the holder lives; opens at once after SIGKILL while the holder is an unreaped zombie', async () => {
    root = mkdtempSync(path.join(tmpdir(), 'sql-storage-crash-'));
    const dir = path.join(root, 'pgdata');
    // The holder runs under a parent that never reaps (as PID 1 of some containers): `sh` starts it in
    // the background and becomes `sleep`, which never waits, so the killed holder stays a zombie.
    reaper = spawn(
      'sh',
      ['-c', `"${process.execPath}" --import tsx "${holderScript}" "${dir}" & exec sleep 600`],
      {
        cwd: packageDir,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    reaper.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await until('the holder to open the database', () => output.includes('ready'), 120_000);
    const holder = readHolder(`${dir}.pid`);
    expect(holder?.pid).toBeGreaterThan(0);
    const pid = holder?.pid ?? 0;
    expect(holderAlive(holder!)).toBe(true);
    await expect(openPglite(dir)).rejects.toThrow(`in use by process ${pid}`);

    process.kill(pid, 'SIGKILL');
    await until('the killed holder to be a zombie', () => processState(pid) === 'Z');
    // kill(pid, 0) still answers for the zombie; the lock must not.
    expect(() => process.kill(pid, 0)).not.toThrow();
    const db = await openPglite(dir);
    try {
      expect((await db.query<{ n: number }>('SELECT n FROM t')).rows).toEqual([{ n: 1 }]);
      expect(readHolder(`${dir}.pid`)?.pid).toBe(process.pid);
    } finally {
      await db.close();
    }
  }, 240_000);

  it('treats a live pid with another start time (a reused pid) as gone', async () => {
    root = mkdtempSync(path.join(tmpdir(), 'sql-storage-reused-'));
    const dir = path.join(root, 'pgdata');
    writeFileSync(`${dir}.pid`, JSON.stringify({ pid: process.ppid, start: '1' }));
    const db = await openPglite(dir);
    await db.close();
  }, 120_000);
});
