import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { afterAll } from 'vitest';

/** The exchange's folder, and its entries run from their sources by the process tests. */
export const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
export const serverEntry = path.join(serviceDir, 'src/server.ts');
export const cliEntry = path.join(serviceDir, 'src/cli.ts');

/**
 * The working folder of a test file's server processes, removed after the file: inside the
 * repository (`.tmp/`, git-ignored) so that `--import tsx` resolves from it.
 */
export function useServerFolder(prefix: string): string {
  mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
  const cwd = mkdtempSync(path.join(serviceDir, '.tmp', prefix));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));
  return cwd;
}

/**
 * The embedded default as `npm start` runs it (PGlite, a generated master key, the demo accounts),
 * whatever the test environment sets; the data under `cwd` (by default it would be the repository's
 * ./data/exchange).
 */
export function embeddedEnv(cwd: string): Record<string, string> {
  return {
    DATABASE_URL: '',
    MASTER_KEY: '',
    MASTER_KEY_FILE: '',
    DATA_DIR: path.join(cwd, 'data/exchange'),
    SEED_DEMO: '',
    LOG_LEVEL: 'warn',
  };
}

/** A server on the test's PostgreSQL database with a fixed master key and no demo accounts. */
export function postgresEnv(cwd: string, databaseUrl: string, masterKey: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    MASTER_KEY: masterKey,
    MASTER_KEY_FILE: '',
    DATA_DIR: path.join(cwd, 'data'),
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
  };
}

/**
 * `src/server.ts` as a real process on a free port, once `/health` answers. `sandboxSecrets`: the
 * test means the documented sandbox secrets on PostgreSQL (ALLOW_SANDBOX_SECRETS=true); `timeoutMs`:
 * how long it may take to answer (a first start on the embedded database runs initdb).
 */
export function startExchangeProcess(
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: { sandboxSecrets?: boolean; timeoutMs?: number } = {},
): Promise<ServiceProcess> {
  return startServiceProcess({
    ...options,
    name: 'exchange',
    entry: serverEntry,
    cwd,
    env,
    port: 0,
    healthPath: '/health',
  });
}
