import { describe, expect, it } from 'vitest';
import { CliError, runCli } from '../../src/cli/commands.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();

async function run(...argv: string[]): Promise<{ code: number; output: unknown }> {
  let output: unknown;
  const code = await runCli(argv, {
    db: target.db(),
    reference,
    secretBox,
    print: (value) => (output = value),
  });
  return { code, output };
}

describe('operator CLI', () => {
  it('creates an account, issues and revokes a key, adjusts balances with a reason and reconciles', async () => {
    const created = await run('account', 'create', '--email', 'ops@example.com');
    expect(created.output).toMatchObject({ email: 'ops@example.com' });
    await expect(run('account', 'create', '--email', 'ops@example.com')).rejects.toBeInstanceOf(CliError);
    const updated = await run(
      'account',
      'update',
      'ops@example.com',
      '--withdraw-confirmation',
      'true',
      '--svcid',
      'OPS1',
    );
    expect(updated.output).toMatchObject({ svcid: 'OPS1', withdrawConfirmation: true, twoFactor: false });
    await expect(run('account', 'update', 'OPS1', '--two-factor', 'yes')).rejects.toThrow(/true or false/);

    const issued = (await run('key', 'issue', 'ops@example.com', '--scopes', 'read,trade')).output as {
      apiKey: string;
      apiSecret: string;
    };
    expect(issued.apiSecret).toMatch(/^[A-Za-z0-9]{40}$/);
    expect((await run('key', 'revoke', issued.apiKey)).code).toBe(0);
    const keys = (await run('key', 'list', 'ops@example.com')).output as {
      enabled: boolean;
      revoked: boolean;
    }[];
    expect(keys[0]).toMatchObject({ enabled: false, revoked: true });

    const adjusted = await run(
      'balance',
      'adjust',
      'ops@example.com',
      'uah',
      '1500.25',
      '--reason',
      'opening balance',
    );
    expect(adjusted.output).toMatchObject({
      balances: [{ currency: 'uah', available: '1500.25', locked: '0' }],
    });
    await expect(
      run('balance', 'adjust', 'ops@example.com', 'uah', '1.001', '--reason', 'x'),
    ).rejects.toThrow(/at most 2 decimals/);
    await expect(run('balance', 'adjust', 'ops@example.com', 'uah', '5')).rejects.toThrow(/--reason/);
    await expect(
      run('balance', 'adjust', 'ops@example.com', 'uah', '--amount=-2000', '--reason', 'x'),
    ).rejects.toThrow(/insufficient_funds/);
    await run(
      'balance',
      'adjust',
      'ops@example.com',
      'uah',
      '--reason',
      'fee refund reversal',
      '--',
      '-0.25',
    );
    expect((await run('balances', 'ops@example.com')).output).toMatchObject({
      balances: [{ currency: 'uah', available: '1500' }],
    });
    const { rows } = await target
      .db()
      .query<{ reason: string }>(`SELECT reason FROM journal_entries WHERE kind = 'adjustment' ORDER BY id`);
    expect(rows.map((row) => row.reason)).toEqual(['opening balance', 'fee refund reversal']);
    const listed = (await run('account', 'list')).output as { email: string }[];
    expect(listed.map((a) => a.email)).toEqual(['ops@example.com']);
    expect(await run('reconcile')).toMatchObject({ code: 0, output: { ok: true, entries: 2 } });

    await target.db().query(`UPDATE balances SET available = available + 1 WHERE currency = 'uah'`);
    expect((await run('reconcile')).code).toBe(1);
  });
});
