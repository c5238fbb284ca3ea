import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServiceProcess } from '@platform/testkit/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, embeddedEnv, startExchangeProcess, useServerFolder } from '../support/server-process.js';

// Issue 41: with the exchange running on its embedded database, every operator command answered
// "the embedded database ... is in use" but `deposit`. Now the tool sends every command to the
// running server of the data folder (its loopback endpoint), which runs it on its own database:
// the same output and exit code as the same command run directly on a stopped server's data.
//
// Two data folders with the same content: `served` (its server runs) and `direct` (a copy taken
// while the server was stopped, opened by the tool itself). Each command runs on both, beside each
// other; only what is random or timed differs (new keys' secrets, creation times).
const cwd = useServerFolder('operator-endpoint-');
const served = path.join(cwd, 'served/exchange');
const direct = path.join(cwd, 'direct/exchange');
const env = (dataDir: string) => ({
  ...embeddedEnv(cwd),
  DATA_DIR: dataDir,
  // Nothing runs on its own in the served folder that the copy would not see.
  RECONCILE_INTERVAL_MS: '0',
  WALLET_POLL_MS: '600000',
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real tool as `npm run admin` runs it (its sources), on `dataDir`. */
function admin(dataDir: string, argv: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', cliEntry, ...argv], {
      cwd,
      env: { ...process.env, ...env(dataDir), INIT_CWD: cwd },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What differs between two runs of a command by nature: fresh secrets and keys, times. */
function normalised(run: Run): Run {
  const text = (value: string) =>
    value
      .replace(/"(apiKey|apiSecret|publicKey)": "[^"]+"/g, '"$1": "<random>"')
      // Sequence numbers: a server's start draws some (its demo seed's credits, idempotent, still
      // take a ledger entry id each), so the served copy's next id is past the other's.
      .replace(/"entryId": \d+/g, '"entryId": "<id>"')
      .replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"/g, '"<time>"');
  return { code: run.code, stdout: text(run.stdout), stderr: text(run.stderr) };
}

describe('the operator tool beside a running server on the embedded database', () => {
  let server: ServiceProcess | undefined;

  beforeAll(async () => {
    // A first start creates the data (database, master key, demo accounts); the copy is taken stopped.
    const first = await startExchangeProcess(cwd, env(served), { timeoutMs: 180_000 });
    await first.stop();
    cpSync(served, direct, { recursive: true });
    server = await startExchangeProcess(cwd, env(served), { timeoutMs: 180_000 });
  }, 240_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  it('runs every command in the server: output and exit code as when run directly (errors too)', async () => {
    const commands: string[][] = [
      ['account', 'create', '--email', 'ops@example.com', '--svcid', 'OPS1'],
      ['account', 'update', 'OPS1', '--withdraw-confirmation', 'true'],
      ['balance', 'adjust', 'ops@example.com', 'uah', '1500.25', '--reason', 'opening balance'],
      // A refusal: exit 2, its message on stderr.
      ['balance', 'adjust', 'ops@example.com', 'uah', '5'],
      ['key', 'issue', 'ops@example.com', '--scopes', 'read,trade'],
      ['reconcile'],
      ['account', 'list'],
    ];
    const viaServer: Run[] = [];
    for (const argv of commands) {
      const [run, directly] = await Promise.all([admin(served, argv), admin(direct, argv)]);
      expect(normalised(run), argv.join(' ')).toEqual(normalised(directly));
      viaServer.push(run);
    }
    expect(viaServer.map((run) => run.code)).toEqual([0, 0, 0, 2, 0, 0, 0]);
    expect(viaServer[3]!.stderr).toBe('--reason <text> is required: adjustments are journalled\n');
    // Ran in the server, on its database: the account it created and funded is there.
    expect(JSON.parse(viaServer[6]!.stdout)).toContainEqual(
      expect.objectContaining({
        email: 'ops@example.com',
        withdrawConfirmation: true,
        balances: [{ currency: 'uah', available: '1500.25', locked: '0' }],
      }),
    );
  }, 600_000);

  it('refuses a caller without the token, a process of another user with it, and a file it must not trust', async () => {
    const file = path.join(served, 'operator.json');
    const { port, token } = JSON.parse(readFileSync(file, 'utf8')) as { port: number; token: string };
    const post = (authorization: string, body = JSON.stringify({ argv: ['account', 'list'] })) =>
      fetch(`http://127.0.0.1:${port}/operator/command`, {
        method: 'POST',
        headers: { authorization },
        body,
      });
    expect((await post('Bearer nope')).status).toBe(403);
    expect((await post(`Bearer ${token}`, 'x'.repeat(70_000))).status).toBe(413);
    expect((await post(`Bearer ${token}`)).status).toBe(200);

    // The token alone is not enough: the connecting socket must be the server's user's (or root's).
    if (process.getuid?.() === 0) {
      const other = spawnSync(
        process.execPath,
        [
          '-e',
          `fetch('http://127.0.0.1:${port}/operator/command', { method: 'POST', headers: { authorization: 'Bearer ${token}' }, body: '{"argv":["account","list"]}' }).then((r) => console.log(r.status))`,
        ],
        { uid: 65534, gid: 65534, encoding: 'utf8', cwd: '/' },
      );
      expect(other.stdout.trim(), other.stderr).toBe('403');
    }

    // A file others may read (or another user's) could name anyone's port: the tool sends nothing.
    chmodSync(file, 0o644);
    const loose = await admin(served, ['account', 'list']);
    expect(loose.code).toBe(2);
    expect(loose.stderr).toMatch(/not this user's own file with mode 0600/);
    chmodSync(file, 0o600);
    if (process.getuid?.() === 0) {
      chownSync(file, 65534, 65534);
      const foreign = await admin(served, ['account', 'list']);
      expect(foreign.code).toBe(2);
      expect(foreign.stderr).toMatch(/owner uid 65534/);
      chownSync(file, 0, 0);
    }
    expect((await admin(served, ['account', 'list'])).code).toBe(0);
  }, 240_000);
});
