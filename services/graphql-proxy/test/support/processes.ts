import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { freePort } from '@platform/testkit/ports';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(HERE, '../../../..');
const BLOG_ENTRY = path.join(REPO_ROOT, 'services/blog-graphql/src/server.ts');
const PROXY_ENTRY = path.join(REPO_ROOT, 'services/graphql-proxy/src/server.ts');
export const BLOG_TOKEN = 'blog-dev-token';

export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The real blog upstream as a child process; `restart()` brings it back on the same port and data. */
export interface Blog {
  readonly port: number;
  readonly url: string;
  readonly graphqlUrl: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startBlog(dataDir: string): Promise<Blog> {
  const port = await freePort();
  let proc: ServiceProcess | undefined;
  const blog: Blog = {
    port,
    url: `http://127.0.0.1:${port}`,
    graphqlUrl: `http://127.0.0.1:${port}/graphql`,
    async stop() {
      await proc?.stop();
      proc = undefined;
    },
    async start() {
      proc = await startServiceProcess({
        name: 'blog-graphql',
        entry: BLOG_ENTRY,
        cwd: REPO_ROOT,
        port,
        env: { BLOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        healthPath: '/health',
      });
    },
  };
  await blog.start();
  return blog;
}

export interface ProxyProcess {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  output(): string;
}

/** The proxy as a child process with its files under `baseDir`; restartable with the same files. */
export async function startProxy(baseDir: string, env: NodeJS.ProcessEnv): Promise<ProxyProcess> {
  const port = await freePort();
  let proc: ServiceProcess | undefined;
  let lastOutput = '';
  const proxy: ProxyProcess = {
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => proc?.output() ?? lastOutput,
    async stop() {
      lastOutput = proc?.output() ?? lastOutput;
      await proc?.stop();
      proc = undefined;
    },
    async start() {
      proc = await startServiceProcess({
        name: 'graphql-proxy',
        entry: PROXY_ENTRY,
        cwd: REPO_ROOT,
        port,
        env: {
          PATHS_BASE_DIR: baseDir,
          LOG_LEVEL: 'warn',
          PROBE_INTERVAL_MS: '200',
          RETRY_BASE_MS: '100',
          RETRY_MAX_MS: '400',
          UPSTREAM_TIMEOUT_MS: '1500',
          ...env,
        },
        healthPath: '/health',
      });
    },
  };
  await proxy.start();
  return proxy;
}
