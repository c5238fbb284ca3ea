import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProxyProcess, REPO_ROOT, startProxy, tempDir } from './support/processes.js';

// Issue 41: a second proxy on one machine failed at start with `listen EADDRINUSE 127.0.0.1:9501`
// (both on the default METRICS_PORT), which names neither the listener nor the setting. Two real
// processes: the first holds a metrics port, the second is started on it.
let dir: Awaited<ReturnType<typeof tempDir>>;
let first: ProxyProcess;

beforeAll(async () => {
  dir = await tempDir('proxy-metrics-port');
  first = await startProxy(path.join(dir.path, 'first'), {
    UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql',
  });
});

afterAll(async () => {
  await first?.close();
  await dir?.remove();
});

describe('two proxies on one machine', () => {
  it("the second, on the first's METRICS_PORT, stops naming the setting", async () => {
    const port = new URL(await first.metricsUrl()).port;
    const second = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'services/graphql-proxy/src/server.ts')],
      {
        cwd: REPO_ROOT,
        timeout: 60_000,
        env: {
          ...process.env,
          PORT: '0',
          METRICS_PORT: port,
          UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql',
          PATHS_BASE_DIR: path.join(dir.path, 'second'),
          LOG_LEVEL: 'warn',
        },
      },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `graphql-proxy: could not start: METRICS_PORT ${port} is in use: set METRICS_PORT or METRICS_PORT=0`,
    );
    // The first one is unharmed.
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
  }, 90_000);
});
