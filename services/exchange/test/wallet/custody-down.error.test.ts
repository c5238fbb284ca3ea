import { startTcpFront, type TcpFront } from '@platform/testkit/front';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { createWallet } from '../../src/wallet/setup.js';
import type { Wallet } from '../../src/wallet/wallet.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';
import { balanceMap, testWalletConfig } from './support.js';

const target = usePostgresTarget();
let app: App;
let wallet: Wallet;
let down: TcpFront;

beforeAll(async () => {
  // A node that is configured but down: a front of this test process with no server behind it resets
  // every connection, and (unlike a port released by freePort()) no other process can answer there.
  down = await startTcpFront();
  const port = down.port;
  wallet = await createWallet({
    db: target.db(),
    reference,
    config: testWalletConfig({
      sandbox: false,
      nodes: { ltc: { url: `http://u:p@127.0.0.1:${port}`, wallet: 'exchange', cookieFile: undefined } },
    }),
  });
  app = await buildApp({ db: target.db(), reference, secretBox, wallet });
});
afterAll(async () => {
  await app?.close();
  await down?.close();
});

describe('custody unavailable', () => {
  it('answers 503 while the node is down and leaves balances untouched; unserved coins are 503 too', async () => {
    const user = await accountWithKey(target.db(), ['read', 'withdraw']);
    await credit(target.db(), user.account.id, 'ltc', 10n ** 8n);
    const api = client(() => app, user.apiKey, user.secret);
    expect((await api.v3('/v3/auth/deposit/info', { currency: 'ltc' })).json()).toMatchObject({
      address: null,
    });
    const generate = await api.v3('/v3/auth/payment_addresses', { currency: 'ltc' });
    expect(generate.statusCode).toBe(503);
    expect(generate.json().error.name).toBe('custody_unavailable');
    const withdraw = await api.v3('/v3/auth/withdraw', {
      withdraw_type: 'ltc',
      amount: '0.1',
      address: 'rltc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    });
    expect(withdraw.statusCode).toBe(503);
    expect((await balanceMap(target.db(), user.account.id)).ltc).toEqual([10n ** 8n, 0n]);
    const btc = await api.v3('/v3/auth/deposit/info', { currency: 'btc' });
    expect(btc.statusCode).toBe(503);
    expect(btc.json().error.name).toBe('custody_unavailable');
    // A round with the node down logs and goes on.
    await wallet.tick();
  });
});
