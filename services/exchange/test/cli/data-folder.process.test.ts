import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands.js';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { loadReferenceData } from '../../src/reference/load.js';

// A repository of its own (a package.json declaring workspaces) with a workspace folder in it, inside
// the service folder so that `--import tsx` resolves.
const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const cliEntry = path.join(serviceDir, 'src/cli.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const root = mkdtempSync(path.join(serviceDir, '.tmp', 'data-folder-'));
const workspace = path.join(root, 'services/exchange');
mkdirSync(workspace, { recursive: true });
writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'r', workspaces: ['services/*'] }));
const dataDir = path.join(root, 'data/exchange');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The tool as `npm run admin -w services/exchange` runs it from the root: in the workspace, INIT_CWD the root. */
function admin(cwd: string, ...argv: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', cliEntry, ...argv], {
    cwd,
    env: {
      ...process.env,
      DATABASE_URL: '',
      MASTER_KEY: '',
      MASTER_KEY_FILE: '',
      DATA_DIR: '',
      INIT_CWD: root,
      LOG_LEVEL: 'warn',
    },
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('the operator tool and the data folder', () => {
  it('refuses without a database, naming the folder, and creates nothing', () => {
    const run = admin(workspace, 'account', 'list');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no exchange database in ${path.join(dataDir, 'pgdata')}`);
    expect(existsSync(path.join(workspace, 'data'))).toBe(false);
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);

  it("opens the repository root's data/exchange from the workspace and from the root", async () => {
    // What a first start of the server leaves: the database and the master key.
    const key = randomBytes(32);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path.join(dataDir, 'master.key'), `${key.toString('hex')}\n`, { mode: 0o600 });
    const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);
    const db = await openStorage({ kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') });
    try {
      await syncCurrencies(db, reference);
      const code = await runCli(['account', 'create', '--email', 'ops@example.com'], {
        db,
        reference,
        secretBox: createSecretBox(key),
        print: () => {},
      });
      expect(code).toBe(0);
    } finally {
      await db.close();
    }
    for (const cwd of [workspace, root]) {
      const run = admin(cwd, 'account', 'list');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toContainEqual(expect.objectContaining({ email: 'ops@example.com' }));
    }
    expect(existsSync(path.join(workspace, 'data'))).toBe(false);
  }, 240_000);
});
