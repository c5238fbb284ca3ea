import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMicros } from '@platform/testkit/cpu';

export { median } from '@platform/testkit/stats';

/** Resident set now and at its peak (VmRSS, VmHWM of /proc/<pid>/status), in MiB. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

export interface Started {
  child: ChildProcess;
  /** Milliseconds from spawn to the first 2xx of the health URL. */
  startMs: number;
}

/** Spawns `node args` and polls `health` every 10 ms until it answers 2xx (or fails after `timeoutMs`). */
export async function startUntilHealthy(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; health: string; timeoutMs: number },
): Promise<Started> {
  const began = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  while (performance.now() - began < options.timeoutMs) {
    if (child.exitCode !== null)
      throw new Error(`exited with code ${child.exitCode} before healthy:\n${stderr}`);
    try {
      const response = await fetch(options.health, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return { child, startMs: performance.now() - began };
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  child.kill('SIGKILL');
  throw new Error(`not healthy after ${options.timeoutMs} ms:\n${stderr}`);
}

/** Sends `total` copies of a request, `concurrency` at a time; returns how many were not 2xx-4xx. */
export async function burst(
  url: string,
  init: RequestInit,
  total: number,
  concurrency: number,
): Promise<number> {
  let next = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      next += 1;
      try {
        const response = await fetch(url, init);
        await response.arrayBuffer();
        if (response.status >= 500) failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}

/** SIGTERM, SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stop(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system) the process has used so far, in ms: unlike wall time, load on the machine barely changes it. */
export function cpuMsOf(pid: number): number {
  return cpuMicros([pid]) / 1000;
}
