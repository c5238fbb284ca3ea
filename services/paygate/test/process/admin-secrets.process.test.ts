import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useTestDatabase } from '@platform/testkit/fixtures';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { checkGivenSecret } from '../../src/secrets/book.js';
import { SANDBOX_SECRET } from '../support/catalog.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const tool = path.join(serviceDir, 'src/cli/admin.ts');
const database = useTestDatabase('paygate_admin');

/** Runs the operator tool as a real process (as `npm run admin` does); its exit code and both streams. */
function admin(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', tool, ...args], {
      cwd: serviceDir,
      env: { ...process.env, DATABASE_URL: database.url, ALLOW_SANDBOX_SECRETS: 'true', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the tool did not exit within 60 s: ${stdout}${stderr}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function stored(): Promise<{ secret: string; previous_secret: string } | undefined> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ secret: string; previous_secret: string }>(
      "SELECT secret, previous_secret FROM merchant_secrets WHERE merchant_id = 'exchange'",
    );
    return rows[0];
  } catch {
    return undefined; // no table yet: the tool has not opened the database
  } finally {
    await client.end();
  }
}

describe('secrets rotate --secret (the operator tool as a real process)', () => {
  it('refuses a secret shorter or longer than the generated ones or with other characters, storing nothing', async () => {
    // Side by side: each start of the tool under tsx takes seconds on a loaded machine (five one
    // after the other passed 30 s in CI).
    const bads = ['short-secret', 'x'.repeat(129), `${'a'.repeat(31)} b`, `${'a'.repeat(32)}$`];
    const [missing, ...runs] = await Promise.all([
      admin('secrets', 'rotate', 'exchange', '--secret'),
      ...bads.map((bad) => admin('secrets', 'rotate', 'exchange', '--secret', bad)),
    ]);
    runs.forEach((run, i) => {
      expect(run!.code, bads[i]).toBe(2);
      expect(run!.stderr).toMatch(/--secret must be 32-128 characters: letters, digits, "_" and "-"/);
    });
    expect(missing!.code).toBe(2);
    expect(missing!.stderr).toMatch(/--secret takes the new secret/);
    expect(await stored()).toBeUndefined();
  }, 120_000);

  it('stores the given secret, keeps the old one in its grace period, and does not print it back', async () => {
    const given = `ops_${'Z9_-'.repeat(8)}`;
    const run = await admin('secrets', 'rotate', 'exchange', '--grace-seconds', '600', '--secret', given);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ merchant: 'exchange', secret: '(as given)' });
    expect(run.stdout).not.toContain(given);
    expect(await stored()).toEqual({ secret: given, previous_secret: SANDBOX_SECRET });
    // The secret in effect is no new secret.
    const same = await admin('secrets', 'rotate', 'exchange', '--secret', given);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--secret is the secret in effect now/);
    // Without --secret one is generated, as before, and it follows the same rule.
    const generated = await admin('secrets', 'rotate', 'exchange');
    expect(generated.code).toBe(0);
    const secret = (JSON.parse(generated.stdout) as { secret: string }).secret;
    expect(checkGivenSecret(secret, given)).toEqual({ ok: true });
    expect(await stored()).toEqual({ secret, previous_secret: given });
  }, 120_000);
});
