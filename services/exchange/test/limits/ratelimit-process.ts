import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ManagedProcess, spawnManaged, waitUntilReady } from '@platform/testkit/process';

const RATELIMIT = path.resolve(import.meta.dirname, '..', '..', '..', 'ratelimit');

export interface RatelimitProcess {
  readonly process: ManagedProcess;
  /** gRPC target `127.0.0.1:<port>`. */
  readonly grpc: string;
  stop(): Promise<void>;
}

/**
 * Starts the real services/ratelimit as a child process (in-process store unless `env` selects
 * Redis) with one config file, every listener on port 0; the bound gRPC port is read from its
 * 'ratelimit listening' log line, so no port is guessed or reused.
 */
export async function startRatelimit(
  configYaml: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RatelimitProcess> {
  const root = mkdtempSync(path.join(tmpdir(), 'exchange-limits-rl-'));
  mkdirSync(path.join(root, 'config'));
  writeFileSync(path.join(root, 'config', 'exchange.yaml'), configYaml);
  const proc = spawnManaged({
    name: 'ratelimit',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(RATELIMIT, 'src', 'server.ts')],
    cwd: RATELIMIT,
    env: {
      // The harness's REDIS_URL is the reference's name of KVSTORE_URL: unset unless asked for.
      REDIS_URL: '',
      RUNTIME_ROOT: root,
      RUNTIME_WATCH_ROOT: 'false',
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      DEBUG_HOST: '127.0.0.1',
      DEBUG_PORT: '0',
      // No statsd sink: false would print the stats to standard output, so point it nowhere useful
      // but harmless (UDP to the discard port).
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: '9',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      ...env,
    },
  });
  let grpc: string | undefined;
  await waitUntilReady(
    proc,
    async () => {
      // The JSON log line {"@message":"ratelimit listening","http":"127.0.0.1:N","grpc":"127.0.0.1:M",...}
      for (const line of proc.output().split('\n')) {
        // A line still being written is not JSON yet: the next poll reads it whole.
        if (!line.includes('ratelimit listening') || !line.endsWith('}')) continue;
        const fields = JSON.parse(line) as { grpc?: unknown };
        if (typeof fields.grpc === 'string') grpc = fields.grpc;
      }
      return grpc !== undefined;
    },
    30_000,
  );
  if (!grpc) throw new Error(`ratelimit did not report its gRPC address:\n${proc.output()}`);
  return { process: proc, grpc, stop: () => proc.stop() };
}
