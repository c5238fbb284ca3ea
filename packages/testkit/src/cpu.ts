import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Processes of a tree on Linux: `pid` and all its descendants (a service started by
 * `startServiceProcess` runs under a watchdog shell, so its own pid is a child of the one returned).
 */
export function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [pid];
  }
}

/**
 * User + system CPU time (microseconds) the processes have used, from /proc (clock ticks of 10 ms):
 * benchmarks divide a phase's difference by its requests, a figure far less noisy than a rate on a
 * shared machine. A process that has gone counts 0.
 */
export function cpuMicros(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // gone
    }
  }
  return ticks * 10_000;
}

/** The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`: a zombie...), undefined once the process is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * Pins a process tree (every thread of `pid` and its descendants) to one core with `taskset`: two
 * servers compared side by side in a benchmark then share that core fairly, whatever else the
 * machine runs on the others.
 */
export function pinToCore(pid: number, core: number): void {
  for (const member of processTree(pid)) {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(member)], { stdio: 'ignore' });
  }
}
