import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { type App, type AppOptions, buildApp } from '../../src/app.js';
import { parseSettings } from '../../src/config.js';
import type { Env } from '../../src/settings/env.js';
import { bindGrpc } from '../../src/transport/grpc-server.js';
import { listenHttp } from '../../src/transport/http-server.js';

export interface RunningApp {
  app: App;
  /** `http://127.0.0.1:<port>` */
  http: string;
  /** `127.0.0.1:<port>` */
  grpc: string;
  /** The config directory (`<root>/config`). */
  configDir: string;
  close(): Promise<void>;
}

/**
 * Real time, shifted so that the app starts one second into a minute. Windows are aligned to the
 * epoch's minutes, so a test counting calls against a per-minute rule on the real clock saw its
 * counter reset whenever a minute ended between its first and last call (about 1 run in 100 across
 * these tests); with this clock a test has 59 seconds before that happens.
 */
export function minuteStartClock(): () => number {
  const started = Date.now();
  const base = Math.ceil(started / 60_000) * 60_000 + 1_000;
  return () => base + (Date.now() - started);
}

/** Writes `files` into a fresh runtime root and starts the app on free ports, in-process. */
export async function startApp(
  files: Record<string, string>,
  env: Env = {},
  options: AppOptions = {},
): Promise<RunningApp> {
  const root = mkdtempSync(join(tmpdir(), 'rl-runtime-'));
  const configDir = join(root, 'config');
  mkdirSync(configDir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(configDir, name), text);
  const settings = parseSettings({ RUNTIME_ROOT: root, RUNTIME_WATCH_ROOT: 'false', ...env });
  const app = buildApp(settings, { logger: pino({ level: 'silent' }), now: minuteStartClock(), ...options });
  await app.prepare();
  const grpcPort = await bindGrpc(app.grpcServer, '127.0.0.1:0', grpc.ServerCredentials.createInsecure());
  const httpPort = await listenHttp(app.httpServer, '127.0.0.1', 0);
  return {
    app,
    http: `http://127.0.0.1:${httpPort}`,
    grpc: `127.0.0.1:${grpcPort}`,
    configDir,
    close: () => app.close(2000),
  };
}

export const THREE_PER_MINUTE = `
domain: example
descriptors:
  - key: user
    rate_limit:
      unit: minute
      requests_per_unit: 3
  - key: free
    rate_limit:
      unlimited: true
`;
