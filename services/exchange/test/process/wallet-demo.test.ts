import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import {
  cliEntry,
  embeddedEnv,
  serviceDir,
  startExchangeProcess,
  useServerFolder,
} from '../support/server-process.js';
import { v3Headers } from '../support/signing.js';

const cwd = useServerFolder('wallet-demo-');
const dataDir = path.join(cwd, 'data/exchange');
// The embedded default, as `npm start` runs it.
const env = { ...embeddedEnv(cwd), WALLET_POLL_MS: '200', SANDBOX_WITHDRAWAL_DELAY_MS: '500' };

function admin(...argv: string[]) {
  return adminIn(cwd, cwd, ...argv);
}

/** The tool as `npm run admin -w services/exchange` runs it: in `dir`, invoked from `invokedFrom`. */
function adminIn(dir: string, invokedFrom: string, ...argv: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', cliEntry, ...argv], {
    cwd: dir,
    env: { ...process.env, ...env, INIT_CWD: invokedFrom },
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('wallet as a new user tries it (npm start on the embedded database)', () => {
  it('sandbox deposit through the operator tool while the server runs, confirmation turned on beside it, then a withdrawal confirmed from the outbox mail', async () => {
    const server = await startExchangeProcess(cwd, env, { timeoutMs: 180_000 });
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo-api-key.json'), 'utf8'));
    const v3 = async (apiPath: string, body: unknown = {}) => {
      const text = JSON.stringify(body);
      const response = await fetch(`${server.url}${apiPath}`, {
        method: 'POST',
        headers: v3Headers(demo.apiKey, demo.apiSecret, apiPath, text),
        body: text,
      });
      // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of several response shapes
      return { status: response.status, json: (await response.json()) as Record<string, any> };
    };
    try {
      // The demo account has its sandbox addresses from the start.
      const { address } = (await v3('/v3/auth/deposit/info', { currency: 'btc' })).json;
      expect(address).toMatch(/^bc1q/);
      expect((await v3('/v3/auth/payment_addresses', { currency: 'btc' })).status).toBe(400);
      expect((await v3('/v3/auth/deposit/info', { currency: 'xrp' })).json).toMatchObject({
        address: expect.stringMatching(/^r/),
        memo: expect.stringMatching(/^\d+$/),
      });
      expect(statSync(path.join(dataDir, 'operator.json')).mode & 0o777).toBe(0o600);

      // The server holds the PGlite directory: the tool forwards the command to it.
      const simulated = admin('deposit', 'simulate', 'btc', address, '0.25', '--confirmations', '1');
      expect(simulated.stderr).toBe('');
      expect(simulated.code).toBe(0);
      const { txid, deposit } = JSON.parse(simulated.stdout);
      expect(txid).toMatch(/^[0-9a-f]{64}$/);
      expect(deposit).toMatchObject({ status: 'pending', confirmations: 1 });
      // Run from the package folder as `npm run admin -w ...` does, invoked where the server's data is.
      const elsewhere = mkdtempSync(path.join(serviceDir, '.tmp', 'wallet-demo-pkg-'));
      const confirmed = adminIn(elsewhere, cwd, 'deposit', 'confirm', txid, '--confirmations', '2');
      rmSync(elsewhere, { recursive: true, force: true });
      expect(confirmed.code).toBe(0);
      expect(JSON.parse(confirmed.stdout).deposit).toMatchObject({ status: 'credited' });
      const history = (await v3('/v3/auth/assets-history', {})).json;
      expect(history.items).toMatchObject([{ type: 'deposit', status: 'done', amount: 0.25, currency: 1 }]);
      const wallets = (await v3('/v3/auth/r/wallets')).json as unknown as unknown[][];
      expect(wallets).toContainEqual(['exchange', 'BTC', 2.75, null, 2.75]);
      // A bad argument is a clear refusal.
      const bad = admin('deposit', 'simulate', 'btc', address, '0.000000001');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/at most 8 decimals/);
      // Without the token file's token the endpoint refuses.
      const { port } = JSON.parse(readFileSync(path.join(dataDir, 'operator.json'), 'utf8'));
      const forged = await fetch(`http://127.0.0.1:${port}/operator/command`, {
        method: 'POST',
        headers: { authorization: 'Bearer nope' },
        body: JSON.stringify({ argv: ['deposit', 'confirm', txid, '--confirmations', '9'] }),
      });
      expect(forged.status).toBe(403);

      // The operator turns e-mail confirmation on while the server runs (README Wallet step 4;
      // until issue 41 every command but deposit needed the server stopped), then the user withdraws.
      const updated = admin('account', 'update', 'demo@example.com', '--withdraw-confirmation', 'true');
      expect(updated.stderr).toBe('');
      expect(updated.code).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({
        email: 'demo@example.com',
        withdrawConfirmation: true,
      });
      const [result] = (
        await v3('/v3/auth/withdraw', {
          withdraw_type: 'btc',
          amount: 0.1,
          address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
        })
      ).json as unknown as { status: string; withdrawal_id: number }[];
      expect(result!.status).toBe('awaiting_confirmation');
      const outbox = path.join(dataDir, 'outbox');
      const file = await until('the confirmation mail', async () =>
        readdirSync(outbox).find((name) => name.endsWith('.eml')),
      );
      const mail = await simpleParser(readFileSync(path.join(outbox, file)));
      const confirmUrl = (mail.text ?? '').match(/Confirm it: (\S+)/)?.[1];
      expect(confirmUrl).toMatch(new RegExp(`^${server.url}/v3/links/`));
      const page = await fetch(confirmUrl!);
      expect(page.status).toBe(200);
      const done = await fetch(confirmUrl!, { method: 'POST', headers: { accept: 'application/json' } });
      expect(await done.json()).toMatchObject({ ok: true, action: 'confirm' });
      const finished = await until('the withdrawal to complete', async () => {
        const details = (await v3('/v3/auth/withdraw/details', { id: result!.withdrawal_id })).json;
        return details.status === 'done' ? details : undefined;
      });
      expect(finished.txid).toMatch(/^[0-9a-f]{64}$/);
      const after = (await v3('/v3/auth/r/wallets')).json as unknown as unknown[][];
      expect(after).toContainEqual(['exchange', 'BTC', 2.6495, null, 2.6495]);
    } finally {
      await server.stop();
    }
  }, 240_000);
});
