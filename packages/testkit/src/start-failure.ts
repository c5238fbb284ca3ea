import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A port of 127.0.0.1 held by a listener of this process (another service's port, in a test). */
export async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Runs a service's entry (`node --import tsx <entry>`) that is expected to stop on its own at
 * start, and answers its exit code and standard error.
 */
export function runToExit(
  entry: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', entry],
      { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 120_000 },
      (error, _stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stderr });
      },
    );
  });
}

/**
 * Starts a service's entry on a fresh data folder with `METRICS_PORT` set to a port another
 * listener holds, and answers what it printed and its exit code beside what it should have (issue
 * 41: one line naming the setting, exit 1, no stack trace).
 */
export async function startOnHeldMetricsPort(
  name: string,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<{ got: { code: number | null; stderr: string }; expected: { code: number; stderr: string } }> {
  const held = await holdPort();
  const dir = await mkdtemp(path.join(tmpdir(), `${name}-metrics-port-`));
  try {
    const got = await runToExit(path.join(root, 'src/server.ts'), {
      cwd: root,
      env: { ...env, DATA_DIR: dir, PORT: '0', METRICS_PORT: String(held.port), LOG_LEVEL: 'warn' },
    });
    const stderr = `${name}: could not start: METRICS_PORT ${held.port} is in use: set METRICS_PORT or METRICS_PORT=0\n`;
    return { got, expected: { code: 1, stderr } };
  } finally {
    await held.release();
    await rm(dir, { recursive: true, force: true });
  }
}
