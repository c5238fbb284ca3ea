import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from '@platform/testkit/app';
import { afterAll, describe, expect, it } from 'vitest';
import { clientSignV3, nextNonce } from '../support/signing.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'codes-server-'));
// The embedded default, at info level so the request log lines are there to be searched.
const env = {
  DATABASE_URL: '',
  MASTER_KEY: '',
  MASTER_KEY_FILE: '',
  // The data under the temporary folder (by default it would be the repository's ./data/exchange).
  DATA_DIR: path.join(cwd, 'data/exchange'),
  SEED_DEMO: '',
  LOG_LEVEL: 'info',
};

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** A signed v3 call with the credentials of a seeded demo key file. */
async function call(
  url: string,
  keyFile: string,
  method: 'POST' | 'PUT',
  apiPath: string,
  body: unknown = {},
) {
  const { apiKey, apiSecret } = JSON.parse(readFileSync(path.join(cwd, 'data/exchange', keyFile), 'utf8'));
  const text = JSON.stringify(body);
  const nonce = nextNonce();
  const response = await fetch(`${url}${apiPath}`, {
    method,
    headers: {
      'content-type': 'application/json',
      'svc-nonce': nonce,
      'svc-apikey': apiKey,
      'svc-signature': clientSignV3(apiSecret, apiPath, nonce, text),
    },
    body: text,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & unknown[] };
}

/** The server on the embedded default, on a port of the system's choosing. */
const startServer = () =>
  startServiceProcess({ name: 'exchange', entry, cwd, env, port: 0, healthPath: '/health' });

describe('transfer codes on the real server (embedded default)', () => {
  it('demo creates a code for 0.01 BTC, demo2 checks and redeems it; codes survive a restart', async () => {
    const first = await startServer();
    let kept: string;
    const secrets: string[] = [];
    try {
      const created = await call(first.url, 'demo-api-key.json', 'POST', '/v3/auth/svc_codes', {
        amount: 0.01,
        currency: 'btc',
      });
      expect(created.status).toBe(200);
      const code = created.body.code as string;
      secrets.push(code);
      const check = await fetch(`${first.url}/v3/svc_codes/${code.slice(0, 5)}/check`);
      expect(await check.json()).toMatchObject({ amount: '0.01', currency: 'btc', status: 'active' });
      const redeemed = await call(first.url, 'demo2-api-key.json', 'PUT', '/v3/auth/svc_codes/redeem', {
        code,
      });
      expect(redeemed.status).toBe(200);
      expect(redeemed.body.status).toBe('redeemed');
      const issued = await call(first.url, 'demo-api-key.json', 'POST', '/v3/auth/svc_codes/issued-by-me');
      expect(issued.body[0]).toMatchObject({ code, status: 'redeemed' });
      const history = await call(first.url, 'demo2-api-key.json', 'POST', '/v3/auth/assets-history/deposits');
      expect(history.body.items).toContainEqual(
        expect.objectContaining({ destination: 'svc_code', amount: 0.01 }),
      );
      // One more, redeemed after the restart.
      const second = await call(first.url, 'demo-api-key.json', 'POST', '/v3/auth/svc_codes', {
        amount: '0.02',
        currency: 'btc',
      });
      kept = second.body.code as string;
      secrets.push(kept);
    } finally {
      await first.stop();
    }
    const output = first.output();
    expect(output).toContain('/v3/auth/svc_codes/redeem');
    for (const secret of secrets) expect(output).not.toContain(secret.split('-')[3]);

    // The operator tool, with the server stopped, lists them without the secret.
    const cli = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(serviceDir, 'src/cli.ts'), 'code', 'list', '--account', 'SVCDEMO'],
      { cwd, env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    expect(cli.status, cli.stderr).toBe(0);
    const listed = JSON.parse(cli.stdout) as { status: string; amount: string }[];
    expect(listed.map((c) => [c.amount, c.status])).toEqual([
      ['0.02', 'active'],
      ['0.01', 'redeemed'],
    ]);
    expect(cli.stdout).not.toContain(kept.split('-')[3]);

    // The lookup key comes from the master key file: the code is found again after a restart.
    const again = await startServer();
    try {
      const redeemed = await call(again.url, 'demo2-api-key.json', 'PUT', '/v3/auth/svc_codes/redeem', {
        code: kept,
      });
      expect(redeemed.status).toBe(200);
      expect(redeemed.body).toMatchObject({ amount: '0.02', status: 'redeemed' });
    } finally {
      await again.stop();
    }
  }, 120_000);
});
