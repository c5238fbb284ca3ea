import { type Litecoind, startLitecoind } from '@platform/testkit/litecoind';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { createWallet } from '../../src/wallet/setup.js';
import type { Wallet } from '../../src/wallet/wallet.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';
import { balanceMap, expectReconciled, testWalletConfig } from './support.js';

const target = usePostgresTarget();
let node: Litecoind;
let app: App;
let wallet: Wallet;
const LTC = 10n ** 8n;

beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(101);
  wallet = await createWallet({
    db: target.db(),
    reference,
    config: testWalletConfig({
      nodes: { ltc: { url: node.url, wallet: 'exchange', cookieFile: undefined } },
    }),
  });
  app = await buildApp({ db: target.db(), reference, secretBox, wallet });
  const hot = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'exchange');
  await node.rpc('sendtoaddress', [hot, '20'], 'miner');
  await node.mine(1);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await node?.stop();
});

async function userWithAddress() {
  const user = await accountWithKey(target.db(), ['read', 'withdraw']);
  const api = client(() => app, user.apiKey, user.secret);
  expect((await api.v3('/v3/auth/payment_addresses', { currency: 'ltc' })).json()).toEqual({ success: true });
  const info = (await api.v3('/v3/auth/deposit/info', { currency: 'ltc' })).json();
  return { user, api, info };
}

/** Replaces a mempool transaction of the miner's wallet by one paying the miner back (a double spend). */
async function doubleSpend(txid: string): Promise<string> {
  const tx = await node.rpc<{ vin: { txid: string; vout: number }[] }>('getrawtransaction', [txid, true]);
  let total = 0;
  for (const input of tx.vin) {
    const previous = await node.rpc<{ vout: { value: number }[] }>('getrawtransaction', [input.txid, true]);
    total += previous.vout[input.vout]!.value;
  }
  const back = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'miner');
  const raw = await node.rpc<string>('createrawtransaction', [
    tx.vin.map((input) => ({ txid: input.txid, vout: input.vout })),
    { [back]: (total - 0.01).toFixed(8) },
  ]);
  const signed = await node.rpc<{ hex: string }>('signrawtransactionwithwallet', [raw], 'miner');
  return node.rpc<string>('sendrawtransaction', [signed.hex]);
}

describe('wallet on a litecoind -regtest node', () => {
  it('credits a deposit once it has the confirmations, exactly once', async () => {
    const { user, api, info } = await userWithAddress();
    expect(info).toMatchObject({
      confirmations: 2,
      min_deposit: 0.001,
      address: expect.stringMatching(/^rltc1q/),
    });
    const txid = await node.rpc<string>('sendtoaddress', [info.address, '0.5'], 'miner');
    await node.settled();
    await wallet.tick();
    const [pending] = (await api.v3('/v3/auth/assets-history/deposits', {})).json().items;
    expect(pending).toMatchObject({ amount: 0.5, status: 'pending', destination: info.address, currency: 9 });
    await node.mine(1);
    await wallet.tick();
    expect((await balanceMap(target.db(), user.account.id)).ltc).toBeUndefined();
    await node.mine(1);
    await wallet.tick();
    await wallet.tick();
    expect((await balanceMap(target.db(), user.account.id)).ltc).toEqual([LTC / 2n, 0n]);
    const details = (await api.v3('/v3/auth/deposit/details', { id: pending.id })).json();
    expect(details).toMatchObject({ txid, status: 'done', amount: '0.5' });
    await node.mine(3);
    await wallet.tick();
    expect((await balanceMap(target.db(), user.account.id)).ltc).toEqual([LTC / 2n, 0n]);
    await expectReconciled(target.db());
  });

  it('never credits a deposit that a reorg took out before it was confirmed', async () => {
    const { user, api } = await userWithAddress();
    const { address } = (await api.v3('/v3/auth/deposit/info', { currency: 'ltc' })).json();
    // replaceable (BIP 125), so that the test can double-spend it after the reorg
    const txid = await node.rpc<string>('sendtoaddress', [address, '0.3', '', '', false, true], 'miner');
    const [block] = await node.mine(1);
    await wallet.tick();
    const [seen] = (await api.v3('/v3/auth/assets-history/deposits', {})).json().items;
    expect((await api.v3('/v3/auth/deposit/details', { id: seen.id })).json()).toMatchObject({
      txid,
      status: 'pending',
    });
    // The block with the deposit is orphaned and the payment double-spent on the new chain.
    await node.rpc('invalidateblock', [block]);
    await doubleSpend(txid);
    await node.settled();
    await node.mine(4);
    await wallet.tick();
    await wallet.tick();
    expect((await api.v3('/v3/auth/deposit/details', { id: seen.id })).json()).toMatchObject({
      txid,
      status: 'canceled',
    });
    expect((await balanceMap(target.db(), user.account.id)).ltc).toBeUndefined();
    const { rows } = await target.db().query('SELECT status FROM deposits WHERE id = $1', [seen.id]);
    expect(rows[0]).toEqual({ status: 'orphaned' });
    await expectReconciled(target.db());
  });

  it('sends a withdrawal through the node once, tagged, and completes it when mined', async () => {
    const user = await accountWithKey(target.db(), ['read', 'withdraw']);
    await credit(target.db(), user.account.id, 'ltc', LTC);
    const api = client(() => app, user.apiKey, user.secret);
    const to = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'miner');
    const bad = await api.v3('/v3/auth/withdraw', {
      withdraw_type: 'ltc',
      amount: '0.2',
      address: 'ltc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    });
    expect(bad.json().error.name).toBe('invalid_address');
    expect((await balanceMap(target.db(), user.account.id)).ltc).toEqual([LTC, 0n]);
    const [result] = (
      await api.v3('/v3/auth/withdraw', { withdraw_type: 'ltc', amount: '0.2', address: to })
    ).json();
    await wallet.tick();
    const sent = (await api.v3('/v3/auth/withdraw/details', { id: result.withdrawal_id })).json();
    expect(sent).toMatchObject({ status: 'pending', amount: '0.2', fee: '0.001', total_amount: '0.201' });
    await node.settled();
    const received = await node.rpc<{ amount: number }>('gettransaction', [sent.txid], 'miner');
    expect(received.amount).toBe(0.2);
    const { rows } = await target
      .db()
      .query<{ tag: string }>('SELECT tag FROM withdrawals WHERE id = $1', [result.withdrawal_id]);
    const sends = (
      await node.rpc<{ category: string; comment?: string }[]>('listtransactions', ['*', 1000, 0], 'exchange')
    ).filter((tx) => tx.category === 'send' && tx.comment === rows[0]!.tag);
    expect(sends).toHaveLength(1);
    await node.mine(1);
    await wallet.tick();
    expect((await api.v3('/v3/auth/withdraw/details', { id: result.withdrawal_id })).json().status).toBe(
      'done',
    );
    expect((await balanceMap(target.db(), user.account.id)).ltc).toEqual([LTC - 20_100_000n, 0n]);
    await expectReconciled(target.db());
  });
});
