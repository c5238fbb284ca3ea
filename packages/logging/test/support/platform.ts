import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { startTcpFront } from '@platform/testkit/front';
import { type RedisServer, startRedis } from '@platform/testkit/redis';

/**
 * Every service of the platform as a real process at the most verbose level, JSON lines, with all
 * they print appended to one captured log, for the test that searches it for secrets.
 */
export const REPO = resolve(import.meta.dirname, '../../../..');

export interface CapturedPlatform {
  readonly exchange: ServiceProcess;
  readonly paygate: ServiceProcess;
  readonly events: ServiceProcess;
  readonly blog: ServiceProcess;
  readonly proxy: ServiceProcess;
  readonly ratelimit: ServiceProcess;
  /** Where the exchange keeps its data (the demo key files are in `data/exchange`). */
  readonly exchangeCwd: string;
  /** The secrets given to the services through their settings. */
  readonly settingSecrets: Readonly<Record<string, string>>;
  /** Everything every service printed so far. */
  log(): string;
  stop(): Promise<void>;
}

/** A random secret that cannot appear in a log line by chance. */
export const secret = (label: string): string => `${label}${randomBytes(12).toString('hex')}`;

// Working folders inside the repository (ignored by git): `--import tsx` resolves from the cwd.
const SCRATCH = join(REPO, 'packages/logging/.tmp');
const scratchDirs: string[] = [];
function scratch(name: string): string {
  mkdirSync(SCRATCH, { recursive: true });
  const dir = mkdtempSync(join(SCRATCH, `${name}-`));
  scratchDirs.push(dir);
  return dir;
}

const entry = (service: string) => join(REPO, 'services', service, 'src/server.ts');

export async function startCapturedPlatform(): Promise<CapturedPlatform> {
  const chunks: string[] = [];
  const onOutput = (text: string) => void chunks.push(text);
  const logEnv = { LOG_LEVEL: 'trace', LOG_FORMAT: 'json', DATABASE_URL: '', REDIS_URL: '' };
  const settingSecrets = {
    merchantSecret: secret('merchant'),
    jwtSecret: secret('jwt-secret-at-least-32-bytes-long-'),
    blogToken: secret('blog'),
    adminToken: secret('admin'),
    redisPassword: secret('redis'),
  };
  const started: ServiceProcess[] = [];
  let redis: RedisServer | undefined;
  const start = async (options: Parameters<typeof startServiceProcess>[0]) => {
    const proc = await startServiceProcess({ timeoutMs: 240_000, ...options, onOutput });
    started.push(proc);
    return proc;
  };
  // The exchange needs the gateway's address and the proxy the blog's before they start: fronts
  // owned by this process hold them, and the two servers bind port 0 (no freePort() race).
  const [paygateFront, blogFront] = [await startTcpFront(), await startTcpFront()];
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
    await Promise.all([paygateFront.close(), blogFront.close()]);
    await redis?.stop();
    for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const exchangeCwd = scratch('exchange');
    redis = await startRedis({ args: ['--requirepass', settingSecrets.redisPassword] });
    // Started side by side: each takes a while on a busy machine (PGlite migrations, the tsx loader).
    const [paygate, exchange, events, blog, proxy, ratelimit] = await Promise.all([
      start({
        name: 'paygate',
        entry: entry('paygate'),
        port: 0,
        env: {
          ...logEnv,
          DATA_DIR: join(scratch('paygate'), 'data'),
          PUBLIC_URL: paygateFront.url,
          PAYGATE_MERCHANT_SECRET_EXCHANGE: settingSecrets.merchantSecret,
        },
        healthPath: '/health',
      }).then((paygate) => {
        paygateFront.target(paygate.port);
        return paygate;
      }),
      start({
        name: 'exchange',
        entry: entry('exchange'),
        port: 0,
        cwd: exchangeCwd,
        env: {
          ...logEnv,
          MASTER_KEY: '',
          MASTER_KEY_FILE: '',
          DATA_DIR: join(exchangeCwd, 'data/exchange'),
          SEED_DEMO: 'true',
          PAYGATE_URL: paygateFront.url,
          PAYGATE_MERCHANT_SECRET: settingSecrets.merchantSecret,
        },
        healthPath: '/health',
      }),
      start({
        name: 'events',
        entry: entry('events'),
        port: 0,
        env: {
          ...logEnv,
          HOST: '127.0.0.1',
          DATA_DIR: join(scratch('events'), 'data'),
          JWT_SECRET: settingSecrets.jwtSecret,
        },
        healthPath: '/health',
      }),
      start({
        name: 'blog-graphql',
        entry: entry('blog-graphql'),
        port: 0,
        env: {
          ...logEnv,
          BLOG_DATA_DIR: join(scratch('blog'), 'data'),
          BLOG_AUTH_TOKEN: settingSecrets.blogToken,
        },
        healthPath: '/health',
      }).then((blog) => {
        blogFront.target(blog.port);
        return blog;
      }),
      // the proxy starts without its upstream (offline until it answers)
      start({
        name: 'graphql-proxy',
        entry: entry('graphql-proxy'),
        port: 0,
        cwd: REPO,
        env: {
          ...logEnv,
          PATHS_BASE_DIR: scratch('proxy'),
          UPSTREAM_GRAPHQL_ENDPOINT: `${blogFront.url}/graphql`,
          AUTH_TOKEN: settingSecrets.blogToken,
          ADMIN_TOKEN: settingSecrets.adminToken,
          PROBE_INTERVAL_MS: '200',
        },
        healthPath: '/health',
      }),
      start({
        name: 'ratelimit',
        entry: entry('ratelimit'),
        port: 0,
        cwd: join(REPO, 'services/ratelimit'),
        env: {
          ...logEnv,
          HOST: '127.0.0.1',
          GRPC_HOST: '127.0.0.1',
          GRPC_PORT: '0',
          DEBUG_HOST: '127.0.0.1',
          DEBUG_PORT: '0',
          USE_STATSD: 'false',
          DISABLE_STATS: 'true',
          BACKEND_TYPE: 'redis',
          REDIS_URL: `${redis.host}:${redis.port}`,
          REDIS_AUTH: settingSecrets.redisPassword,
        },
        healthPath: '/healthcheck',
      }),
    ]);
    return {
      exchange,
      paygate,
      events,
      blog,
      proxy,
      ratelimit,
      exchangeCwd,
      settingSecrets,
      log: () => chunks.join(''),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** An HS256 JWT, built by hand (the events service verifies it with its own library). */
export function hs256(secretKey: string, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createHmac('sha256', secretKey).update(unsigned).digest('base64url')}`;
}
