import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceSpec } from './discover.js';
import { type LaunchMode, nodeArguments } from './launch-mode.js';
import type { LauncherOutput } from './output.js';

/**
 * `slow`: still running but not healthy within the launcher's `--health-timeout` (a first start on a
 * loaded machine: an embedded database's initdb, migrations, the demo seed); the launcher keeps
 * polling and says when it becomes healthy, instead of reporting a failure that is not one.
 */
export type ServiceState = 'starting' | 'slow' | 'healthy' | 'failed' | 'stopped';

/**
 * One service running as a child process in its own process group (so that stopping it also stops
 * anything it spawned), with every line it prints prefixed by its name.
 */
export class SupervisedService {
  state: ServiceState = 'starting';
  /** Why the service failed (or, while `slow`, what the health URL answered), for the summary table. */
  failure = '';
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly spec: ServiceSpec,
    readonly options: {
      cwd: string;
      index: number;
      mode: LaunchMode;
      /** The service's environment: the launcher's, with the log format it wants (see main.ts). */
      env: NodeJS.ProcessEnv;
      output: LauncherOutput;
    },
  ) {}

  start(): void {
    const child = spawn(process.execPath, nodeArguments(this.spec, this.options.mode), {
      cwd: this.options.cwd,
      env: this.options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    for (const [name, stream] of [
      ['stdout', child.stdout],
      ['stderr', child.stderr],
    ] as const) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => {
        this.options.output.serviceLine(this.spec.name, this.options.index, name, line);
      });
    }
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (this.state === 'starting' || this.state === 'slow' || this.state === 'healthy') {
          this.state = 'failed';
          this.failure = `exited (${signal ?? `code ${code}`})`;
        }
        resolve();
      });
      child.once('error', (error) => {
        this.state = 'failed';
        this.failure = error.message;
        resolve();
      });
    });
  }

  /**
   * Polls the health URL until it answers 2xx, the process exits, or `timeoutMs` passes; then a
   * process still running is `slow` (not failed: `waitHealthy` again keeps waiting for it).
   */
  async waitHealthy(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    while (Date.now() < deadline) {
      if (this.state === 'failed' || this.state === 'stopped') return false;
      try {
        const response = await fetch(this.spec.health, { signal: AbortSignal.timeout(1_000) });
        await response.arrayBuffer();
        if (response.ok) {
          this.state = 'healthy';
          return true;
        }
        last = `HTTP ${response.status}`;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await sleep(200);
    }
    if (this.state === 'failed' || this.state === 'stopped') return false;
    this.state = 'slow';
    this.failure = `not healthy after ${Math.round(timeoutMs / 1000)} s (${last})`;
    return false;
  }

  /** SIGTERM to the whole process group, SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs: number): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) {
      if (this.state !== 'failed') this.state = 'stopped';
      return;
    }
    const wasFailed = this.state === 'failed';
    this.state = 'stopped';
    signalGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    // Children the service left in its group go too.
    signalGroup(child.pid, 'SIGKILL');
    if (wasFailed) this.state = 'failed';
  }

  /** SIGKILL to the whole process group now (the operator asked twice). */
  kill(): void {
    if (this.child?.pid) signalGroup(this.child.pid, 'SIGKILL');
  }

  /** Resolves when the process has exited, for whatever reason. */
  whenExited(): Promise<void> {
    return this.exited;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}
