import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'sandbox-secret-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Runs the server as a real process until it exits (bounded); answers its exit code and output. */
function runUntilExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd,
      env: { ...process.env, ALLOW_SANDBOX_SECRETS: '', PAYGATE_MERCHANT_SECRET_EXCHANGE: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    // Generous: a start under tsx on a loaded machine; a server that keeps running fails the test.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the gateway did not exit within 60 s; output: ${output}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the gateway refuses its sandbox merchant secret off loopback (real process)', () => {
  it('exits non-zero with HOST=0.0.0.0 and the default secret, naming the settings', async () => {
    const { code, output } = await runUntilExit({
      HOST: '0.0.0.0',
      PORT: '0',
      DATABASE_URL: '',
      DATA_DIR: path.join(cwd, 'data'),
      LOG_LEVEL: 'warn',
    });
    expect(code).not.toBe(0);
    expect(output).toMatch(/paygate: gateway config .*merchant exchange's sandbox secret/);
    expect(output).toMatch(/HOST=0\.0\.0\.0, which is not a loopback address/);
    expect(output).toMatch(
      /set PAYGATE_MERCHANT_SECRET_EXCHANGE to a secret of your own, or ALLOW_SANDBOX_SECRETS=true/,
    );
    expect(output).not.toMatch(/at .*\.ts:\d+/); // one clear line, no stack trace
  });
});
