import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { listeningPorts } from '@platform/testkit/listening';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 41: a second service of one kind on a machine failed at start on its metrics listener with
// `listen EADDRINUSE 127.0.0.1:<port>`, naming neither the listener nor the setting. Two real blogs.
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ENTRY = path.join(REPO_ROOT, 'services/blog-graphql/src/server.ts');
let dir: string;
let first: ServiceProcess;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'blog-metrics-port-'));
  first = await startServiceProcess({
    name: 'blog-graphql',
    entry: ENTRY,
    cwd: REPO_ROOT,
    port: 0,
    env: { BLOG_DATA_DIR: path.join(dir, 'first'), LOG_LEVEL: 'warn' },
    healthPath: '/health',
  });
});

afterAll(async () => {
  await first?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('two blogs on one machine', () => {
  it("the second, on the first's METRICS_PORT, stops naming the setting", async () => {
    const metricsPort = (await listeningPorts(first.pid as number)).find((port) => port !== first.port);
    expect(metricsPort).toBeDefined();
    const second = await promisify(execFile)(process.execPath, ['--import', 'tsx', ENTRY], {
      cwd: REPO_ROOT,
      timeout: 60_000,
      env: {
        ...process.env,
        PORT: '0',
        METRICS_PORT: String(metricsPort),
        BLOG_DATA_DIR: path.join(dir, 'second'),
        LOG_LEVEL: 'warn',
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `blog-graphql: could not start: METRICS_PORT ${metricsPort} is in use: set METRICS_PORT or METRICS_PORT=0`,
    );
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
  }, 90_000);
});
