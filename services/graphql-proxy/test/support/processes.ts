import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { startTcpFront } from '@platform/testkit/front';
import { listeningPorts } from '@platform/testkit/listening';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(HERE, '../../../..');
const BLOG_ENTRY = path.join(REPO_ROOT, 'services/blog-graphql/src/server.ts');
const PROXY_ENTRY = path.join(REPO_ROOT, 'services/graphql-proxy/src/server.ts');
export const BLOG_TOKEN = 'blog-dev-token';

export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The real blog upstream as a child process bound to port 0, behind a TCP front of the test process:
 * `start()` after `stop()` brings it back with the same data at the same address (the front's), and
 * no other process can take that address meanwhile. While stopped, connections are reset.
 */
export interface Blog {
  readonly port: number;
  readonly url: string;
  readonly graphqlUrl: string;
  stop(): Promise<void>;
  /** Starts it again after `stop()`; does nothing while it runs. */
  start(): Promise<void>;
  /** Stops it and closes its address. */
  close(): Promise<void>;
}

export async function startBlog(dataDir: string): Promise<Blog> {
  const front = await startTcpFront();
  let proc: ServiceProcess | undefined;
  const blog: Blog = {
    port: front.port,
    url: front.url,
    graphqlUrl: `${front.url}/graphql`,
    async stop() {
      front.target(undefined);
      await proc?.stop();
      proc = undefined;
    },
    async start() {
      if (proc) return;
      proc = await startServiceProcess({
        name: 'blog-graphql',
        entry: BLOG_ENTRY,
        cwd: REPO_ROOT,
        port: 0,
        env: { BLOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        healthPath: '/health',
      });
      front.target(proc.port);
    },
    async close() {
      await blog.stop();
      await front.close();
    },
  };
  await blog.start();
  return blog;
}

export interface ProxyProcess {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  /** Starts it again after `stop()`; does nothing while it runs. */
  start(): Promise<void>;
  /** Stops it and closes its address. */
  close(): Promise<void>;
  output(): string;
  /** The port the running process itself listens on (behind the front at `port`). */
  listeningPort(): number | undefined;
  /** `http://127.0.0.1:<port>/metrics` of the running process's metrics listener (METRICS_PORT=0). */
  metricsUrl(): Promise<string>;
}

/**
 * The proxy as a child process with its files under `baseDir`, bound to port 0 behind a TCP front:
 * restartable with the same files at the same address.
 */
export async function startProxy(baseDir: string, env: NodeJS.ProcessEnv): Promise<ProxyProcess> {
  const front = await startTcpFront();
  let proc: ServiceProcess | undefined;
  let lastOutput = '';
  const proxy: ProxyProcess = {
    port: front.port,
    url: front.url,
    output: () => proc?.output() ?? lastOutput,
    listeningPort: () => proc?.port,
    async metricsUrl() {
      if (proc?.pid === undefined) throw new Error('the proxy is not running');
      for (const port of await listeningPorts(proc.pid)) {
        if (port === proc.port) continue;
        const url = `http://127.0.0.1:${port}/metrics`;
        const answer = await fetch(url).catch(() => undefined);
        await answer?.arrayBuffer();
        if (answer?.ok) return url;
      }
      throw new Error('the proxy has no metrics listener');
    },
    async stop() {
      front.target(undefined);
      lastOutput = proc?.output() ?? lastOutput;
      await proc?.stop();
      proc = undefined;
    },
    async close() {
      await proxy.stop();
      await front.close();
    },
    async start() {
      if (proc) return;
      proc = await startServiceProcess({
        name: 'graphql-proxy',
        entry: PROXY_ENTRY,
        cwd: REPO_ROOT,
        port: 0,
        env: {
          PATHS_BASE_DIR: baseDir,
          LOG_LEVEL: 'warn',
          PROBE_INTERVAL_MS: '200',
          RETRY_BASE_MS: '100',
          RETRY_MAX_MS: '400',
          // Long enough that a slow answer on a loaded machine is not taken for an offline upstream
          // (that turned answers into queued mutations and extra replays); tests of a hanging upstream
          // set a short one.
          UPSTREAM_TIMEOUT_MS: '10000',
          ...env,
        },
        healthPath: '/health',
      });
      front.target(proc.port);
    },
  };
  await proxy.start();
  return proxy;
}
