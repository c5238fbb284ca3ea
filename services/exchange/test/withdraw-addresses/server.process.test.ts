import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from '@platform/testkit/wait';
import { describe, expect, it } from 'vitest';
import { generateAddress } from '../../src/custody/addresses.js';
import { cliEntry, embeddedEnv, startExchangeProcess, useServerFolder } from '../support/server-process.js';
import { v3Headers } from '../support/signing.js';

const cwd = useServerFolder('withdraw-addresses-');
const dataDir = path.join(cwd, 'data/exchange');
// The embedded default as `npm start` runs it, with a lock of 2 s.
const env = { ...embeddedEnv(cwd), WITHDRAW_ADDRESS_LOCK_S: '2' };

/** The operator tool as `npm run admin -w services/exchange` runs it (the server stopped: PGlite). */
function admin(...argv: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', cliEntry, ...argv], {
    cwd,
    env: { ...process.env, ...env, INIT_CWD: cwd },
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('the address book on the real server (embedded default, WITHDRAW_ADDRESS_LOCK_S=2)', () => {
  it('the demo adds an address (locked 2 s, notice in the outbox); the operator turns allow-list-only on (npm run admin); only that address works', async () => {
    const address = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
    let server = await startExchangeProcess(cwd, env);
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo-api-key.json'), 'utf8'));
    const v3 = async (apiPath: string, body: unknown = {}) => {
      const text = JSON.stringify(body);
      const response = await fetch(`${server.url}${apiPath}`, {
        method: 'POST',
        headers: v3Headers(demo.apiKey, demo.apiSecret, apiPath, text),
        body: text,
      });
      // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of several response shapes
      return { status: response.status, json: (await response.json()) as any };
    };
    try {
      const added = await v3('/v3/auth/withdraw/addresses', { currency: 'btc', address, label: 'mine' });
      expect(added.status).toBe(200);
      expect(added.json.status).toBe('locked');
      expect(Date.parse(added.json.usable_at) - Date.parse(added.json.created_at)).toBe(2_000);
      const outbox = path.join(dataDir, 'outbox');
      const notice = await until('the notice mail', () =>
        readdirSync(outbox).find((name) => name.endsWith('.txt')),
      );
      expect(readFileSync(path.join(outbox, notice), 'utf8')).toContain(address);
    } finally {
      await server.stop();
    }

    const turnedOn = admin('account', 'update', 'demo@example.com', '--withdraw-allowlist-only', 'true');
    expect(turnedOn.stderr).toBe('');
    expect(JSON.parse(turnedOn.stdout)).toMatchObject({ withdrawAllowlistOnly: true });

    server = await startExchangeProcess(cwd, env);
    try {
      expect((await v3('/v3/auth/me')).json.withdraw_allowlist_only).toBe(true);
      const elsewhere = await v3('/v3/auth/withdraw', {
        withdraw_type: 'btc',
        amount: '0.1',
        address: generateAddress('btc'),
      });
      expect(elsewhere.status).toBe(403);
      expect(elsewhere.json.error.name).toBe('address_not_allowlisted');
      // The lock ran out while the server was down (it is a time, not a timer).
      const [entry] = (await v3('/v3/auth/withdraw/addresses/list')).json;
      await sleep(Math.max(0, Date.parse(entry.usable_at) - Date.now()));
      const sent = await v3('/v3/auth/withdraw', { withdraw_type: 'btc', amount: '0.1', address });
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      expect(sent.json[0].status).toBe('pending');
    } finally {
      await server.stop();
    }
  }, 180_000);
});
