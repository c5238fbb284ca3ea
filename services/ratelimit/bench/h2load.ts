import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from '@platform/testkit/ports';
import { encodeRequest } from '../src/proto/messages.js';
import { ensureServiceBuilt, SERVICE, serviceNodeArgs } from './compiled.js';

/** h2load-driven ShouldRateLimit load against service processes (used by backends.bench.ts). */
const run = promisify(execFile);
const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

export interface Load {
  connections: number;
  streams: number;
}

/** A gRPC frame file for domain `bench` with one descriptor per key (`<key>=v`). */
export function frame(work: string, keys: readonly string[]): string {
  const body = encodeRequest({
    domain: 'bench',
    descriptors: keys.map((key) => ({ entries: [{ key, value: 'v' }] })),
    hitsAddend: 0,
  });
  const header = Buffer.alloc(5);
  header.writeUInt32BE(body.length, 1);
  const file = join(work, `frame-${keys.join('-')}.bin`);
  writeFileSync(file, Buffer.concat([header, body]));
  return file;
}

export async function h2load(port: number, frameFile: string, requests: number, load: Load, log?: string) {
  const args = ['-n', String(requests), '-c', String(load.connections), '-m', String(load.streams)];
  args.push('-d', frameFile, '-H', 'content-type: application/grpc', '-H', 'te: trailers');
  if (log) args.push(`--log-file=${log}`);
  args.push(`http://127.0.0.1:${port}${PATH}`);
  const { stdout } = await run('h2load', args, { maxBuffer: 1 << 24 });
  return {
    stdout,
    rps: Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(stdout)?.[1] ?? 0),
    succeeded: Number(/(\d+) succeeded/.exec(stdout)?.[1] ?? 0),
  };
}

/** Requests per second and latency quantiles (ms) of `requests` calls. */
export async function measure(port: number, frameFile: string, requests: number, load: Load, log: string) {
  const { rps, succeeded } = await h2load(port, frameFile, requests, load, log);
  const latencies = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => Number(l.split('\t')[2]))
    .filter((x) => Number.isFinite(x))
    .sort((x, y) => x - y);
  const at = (q: number) =>
    (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) / 1000;
  return { rps, p50ms: at(0.5), p99ms: at(0.99), errors: requests - succeeded };
}

export async function waitPort(port: number, frameFile: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const out = await h2load(port, frameFile, 1, { connections: 1, streams: 1 }).catch(() => undefined);
    if (out?.succeeded === 1) return;
    await sleep(100);
  }
  throw new Error(`port ${port} never answered`);
}

export interface ServiceProcess {
  port: number;
  proc: ChildProcess;
}

/** The compiled service (dist/server.js) as a child process with `env`, gRPC on a free port. */
export async function startService(work: string, env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  await ensureServiceBuilt();
  const grpcPort = await freePort();
  const proc = spawn(process.execPath, serviceNodeArgs(), {
    cwd: SERVICE,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      RUNTIME_ROOT: work,
      PORT: String(await freePort()),
      GRPC_PORT: String(grpcPort),
      GRPC_HOST: '127.0.0.1',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { port: grpcPort, proc };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
}
