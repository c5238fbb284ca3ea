import { readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * A lock file naming the process that holds something (an embedded database directory, a server's
 * operator endpoint), that a restart right after a crash can take over.
 *
 * A pid alone cannot tell a live holder from a dead one: a SIGKILLed process that its parent has not
 * reaped yet (a zombie: in a container whose PID 1 never reaps it stays one) still answers
 * `kill(pid, 0)`, and a reused pid answers for a process that never held the lock. So the file
 * records the holder's pid and its start time (field 22 of `/proc/<pid>/stat`, clock ticks since
 * boot), and the holder is alive only when `/proc/<pid>/stat` exists, is not a zombie (`Z`) or dead
 * (`X`), and shows the same start time. Where there is no `/proc` (not Linux), `kill(pid, 0)` decides.
 */
export interface LockHolder {
  readonly pid: number;
  /** Start time from `/proc/<pid>/stat`; undefined without `/proc` or in an old pid-only file. */
  readonly start: string | undefined;
}

interface ProcStat {
  readonly state: string;
  readonly start: string;
}

/** `/proc/<pid>/stat`: the fields after the command name (which may hold spaces and parentheses). */
function procStat(pid: number): ProcStat | undefined | 'no-proc' {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return 'no-proc';
    try {
      readFileSync('/proc/self/stat');
      return undefined;
    } catch {
      return 'no-proc';
    }
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
  const state = fields[0];
  const start = fields[19];
  if (state === undefined || start === undefined) return 'no-proc';
  return { state, start };
}

/** This process as a lock holder. */
export function currentHolder(): LockHolder {
  const stat = procStat(process.pid);
  return { pid: process.pid, start: typeof stat === 'object' ? stat.start : undefined };
}

function signalAnswers(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process a lock file names still runs (not dead, not a zombie, not a reused pid). */
export function holderAlive(holder: LockHolder): boolean {
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false;
  const stat = procStat(holder.pid);
  if (stat === 'no-proc') return signalAnswers(holder.pid);
  if (stat === undefined) return false;
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  return holder.start === undefined || holder.start === stat.start;
}

/** Reads a lock file: `{"pid":N,"start":"T"}`, or a bare pid as older versions wrote it. */
export function readHolder(file: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (/^\d+$/.test(text)) return { pid: Number(text), start: undefined };
  try {
    const parsed = JSON.parse(text) as { pid?: unknown; start?: unknown };
    return {
      pid: typeof parsed.pid === 'number' ? parsed.pid : 0,
      start: typeof parsed.start === 'string' ? parsed.start : undefined,
    };
  } catch {
    // A torn write of a crashed holder: nobody holds it.
    return { pid: 0, start: undefined };
  }
}

export class LockHeldError extends Error {
  constructor(
    readonly holder: LockHolder,
    message: string,
  ) {
    super(message);
    this.name = 'LockHeldError';
  }
}

/**
 * Takes the lock file for this process: created exclusively; a file of a dead, zombie or reused-pid
 * holder is taken over. `describe` words the refusal when a live process holds it.
 */
export function claimLock(file: string, describe: (pid: number) => string): LockHolder {
  const me = currentHolder();
  const content = JSON.stringify(me);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, content, { flag: 'wx' });
      return me;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(file);
    if (holder && holder.pid !== me.pid && holderAlive(holder)) {
      throw new LockHeldError(holder, describe(holder.pid));
    }
    rmSync(file, { force: true });
  }
  throw new Error(`could not take the lock file ${file}: another process keeps taking it`);
}

/** Removes the lock file if this process still holds it. */
export function releaseLock(file: string): void {
  const holder = readHolder(file);
  if (holder?.pid === process.pid) rmSync(file, { force: true });
}
