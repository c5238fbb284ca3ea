import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const EXAMPLE = 'r4wR3-vjUHK-s6AhZ-UHYBi-iBkra-hMeqU-vj3uh-L74aD-scBcR-BTC-KCode';

/** `npm run -s check-code -w services/exchange -- <code>` as a user runs it, from the repo root. */
async function checkCode(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(
      'npm',
      ['run', '-s', 'check-code', '-w', 'services/exchange', '--', ...args],
      {
        cwd: ROOT,
      },
    );
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

describe('check-code command', () => {
  it('exits 0 for the reference example, 1 for its broken twin, 2 without a code; never echoes it', async () => {
    const valid = await checkCode(EXAMPLE);
    expect(valid).toEqual({ code: 0, stdout: 'valid (BTC, public segment r4wR3)\n' });
    const broken = await checkCode(EXAMPLE.replace('iBkra', 'ickra'));
    expect(broken).toEqual({ code: 1, stdout: 'invalid: the checksum does not match\n' });
    expect((await checkCode()).code).toBe(2);
  }, 60_000);
});

describe('transfer code settings', () => {
  it('reads the brute-force limits with their defaults and refuses wrong values naming the setting', () => {
    expect(loadConfig({}).codeFailureLimits).toEqual({ perAccount: 10, perAddress: 30, windowMs: 900_000 });
    expect(
      loadConfig({
        SVC_CODE_FAILURES_PER_ACCOUNT: '5',
        SVC_CODE_FAILURES_PER_ADDRESS: '50',
        SVC_CODE_FAILURE_WINDOW_MS: '60000',
      }).codeFailureLimits,
    ).toEqual({ perAccount: 5, perAddress: 50, windowMs: 60_000 });
    expect(() => loadConfig({ SVC_CODE_FAILURES_PER_ACCOUNT: '0' })).toThrow(/SVC_CODE_FAILURES_PER_ACCOUNT/);
    expect(() => loadConfig({ SVC_CODE_FAILURE_WINDOW_MS: 'soon' })).toThrow(/SVC_CODE_FAILURE_WINDOW_MS/);
  });
});
