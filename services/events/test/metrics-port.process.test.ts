import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { holdPort, runToExit } from '@platform/testkit/start-failure';
import { expect, it } from 'vitest';

// Issue 41: a second service of one kind on a machine failed at start on its metrics listener with
// `listen EADDRINUSE 127.0.0.1:<port>` inside an uncaught stack trace. Now one line names the
// setting, and the process exits 1.
it('on a METRICS_PORT in use, stops with one line naming the setting, no stack trace', async () => {
  const held = await holdPort();
  const dir = await mkdtemp(path.join(tmpdir(), 'events-metrics-port-'));
  try {
    const root = path.resolve(import.meta.dirname, '..');
    const { code, stderr } = await runToExit(path.join(root, 'src/server.ts'), {
      cwd: root,
      env: {
        DATABASE_URL: '',
        JWT_SECRET: '',
        JWT_JWKS_URL: '',
        DATA_DIR: dir,
        PORT: '0',
        METRICS_PORT: String(held.port),
        LOG_LEVEL: 'warn',
      },
    });
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: `events: could not start: METRICS_PORT ${held.port} is in use: set METRICS_PORT or METRICS_PORT=0\n`,
    });
  } finally {
    await held.release();
    await rm(dir, { recursive: true, force: true });
  }
}, 150_000);
