import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A server process started for tests. It runs under a tiny shell watchdog that kills it when the
 * test process dies, so a crashed or killed test run never leaves servers behind.
 */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number | undefined;
  /** The last lines the process printed, for error messages. */
  output(): string;
  /** Sends SIGTERM (then SIGKILL after `graceMs`) and waits for the exit. Idempotent. */
  stop(graceMs?: number): Promise<void>;
  /** True until the process has exited. */
  isRunning(): boolean;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Receives everything the process prints (both streams), for tests that search all of it. */
  onOutput?: (text: string) => void;
}

const OUTPUT_LINES_KEPT = 200;

// The watchdog: runs the command in the background, polls that the test process (WATCH_PID) is
// alive, and kills the command when it is not. SIGTERM to the watchdog is passed to the command.
const WATCHDOG = [
  '"$@" & child=$!',
  "trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT",
  'while kill -0 "$WATCH_PID" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 0.5; done',
  'kill -TERM $child 2>/dev/null',
  'wait $child',
].join('\n');

/**
 * The service process under the watchdog shell of `spawnManaged` (whose pid is `watchdog`): the
 * shell's child that is not its polling `sleep`. Taking the first pid `pgrep -P` prints was wrong once
 * pids wrapped around (pid_max is 32768 on these machines, and a full test run starts many thousands of
 * processes): a `sleep` could have the lower pid, and a SIGKILL meant for the server hit a `sleep` that
 * had exited meanwhile (ESRCH in CI's feed-resume test) or stopped nothing. Throws when there is none.
 */
export function servicePid(watchdog: number): number {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(watchdog)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when the shell has no child at all.
  }
  for (const line of out.split('\n')) {
    const match = /^\s*(\d+)\s+(\S+)/.exec(line);
    if (match && match[2] !== 'sleep') return Number(match[1]);
  }
  throw new Error(`no service process under the watchdog shell ${watchdog}`);
}

export function spawnManaged(options: SpawnOptions): ManagedProcess {
  const lines: string[] = [];
  const child: ChildProcess = spawn(
    '/bin/sh',
    ['-c', WATCHDOG, 'watchdog', options.command, ...options.args],
    {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, WATCH_PID: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (error) => {
      lines.push(`spawn error: ${error.message}`);
      exited = true;
      resolve();
    });
  });
  const collect = (chunk: Buffer): void => {
    options.onOutput?.(chunk.toString('utf8'));
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.length === 0) continue;
      lines.push(line);
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  return {
    name: options.name,
    pid: child.pid,
    output: () => lines.join('\n'),
    isRunning: () => !exited,
    async stop(graceMs = 5_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!exited) child.kill('SIGKILL');
      }, graceMs);
      await exitPromise;
      clearTimeout(timer);
    },
  };
}

/**
 * Polls `probe` until it resolves true, the process exits, or `timeoutMs` passes. Throws with the
 * process output on failure so the reason shows in the test report.
 */
export async function waitUntilReady(
  proc: ManagedProcess,
  probe: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (!proc.isRunning()) {
      throw new Error(`${proc.name} exited before it was ready:\n${proc.output()}`);
    }
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(50);
  }
  await proc.stop();
  throw new Error(
    `${proc.name} did not become ready within ${timeoutMs} ms (${lastError}):\n${proc.output()}`,
  );
}
