import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import type { Target } from '../support/targets.js';
import { admin, balanceMap, expectReconciled, useWalletApp } from './support.js';

const BTC = 10n ** 10n; // btc ledger precision 10

/** The wallet's happy paths on the sandbox custody, run on PostgreSQL and on PGlite. */
export function sandboxContract(target: Target): void {
  const w = useWalletApp(target);
  describe(`wallet on the sandbox custody (${target.name})`, () => {
    it('generates an address once, credits a deposit after its confirmations exactly once and shows it', async () => {
      const user = await accountWithKey(w.db(), ['read']);
      const api = client(w.app, user.apiKey, user.secret);
      const before = await api.v3('/v3/auth/deposit/info', { currency: 'btc' });
      expect(before.statusCode).toBe(200);
      expect(before.json()).toEqual({ confirmations: 2, min_deposit: 0.0001, address: null });
      expect((await api.v3('/v3/auth/payment_addresses', { currency: 'btc' })).json()).toEqual({
        success: true,
      });
      const again = await api.v3('/v3/auth/payment_addresses', { currency: 'btc' });
      expect(again.statusCode).toBe(400);
      expect(again.json().error.name).toBe('address_exists');
      const info = (await api.v3('/v3/auth/deposit/info', { currency: 'btc' })).json();
      expect(info.address).toMatch(/^bc1q[02-9ac-hj-np-z]{38}$/);

      const simulated = await admin(
        w,
        'deposit',
        'simulate',
        'btc',
        info.address,
        '0.5',
        '--confirmations',
        '1',
      );
      const txid = simulated.txid as string;
      expect(txid).toMatch(/^[0-9a-f]{64}$/);
      expect(simulated.deposit).toMatchObject({ status: 'pending', confirmations: 1 });
      const depositId = (simulated.deposit as { id: number }).id;
      expect((await balanceMap(w.db(), user.account.id)).btc).toBeUndefined();
      const pending = (await api.v3('/v3/auth/deposit/details', { id: depositId })).json();
      expect(pending).toMatchObject({
        id: depositId,
        type: 'deposit',
        txid,
        status: 'pending',
        amount: '0.5',
        currency: 1,
      });
      expect(pending.sn).toMatch(/^D\d{9}$/);
      expect(pending.provider).toBeNull();
      expect(pending.created_at).toMatch(/^\d{4}-\d\d-\d\dT.*(Z|[+-]\d\d:\d\d)$/);

      const confirmed = await admin(w, 'deposit', 'confirm', txid, '--confirmations', '2');
      expect(confirmed.deposit).toMatchObject({ status: 'credited', confirmations: 2 });
      // Scanning again, and confirming again, credits nothing more.
      await w.wallet().tick();
      await admin(w, 'deposit', 'confirm', txid, '--confirmations', '7');
      expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC / 2n, 0n]);
      expect((await api.v3('/v3/auth/deposit/details', { id: depositId })).json().status).toBe('done');
      const history = (await api.v3('/v3/auth/assets-history', {})).json();
      expect(history).toMatchObject({ total_items: 1, currencies: ['btc'] });
      expect(history.items[0]).toMatchObject({
        id: depositId,
        type: 'deposit',
        destination: info.address,
        currency: 1,
        amount: 0.5,
        status: 'done',
      });
      await expectReconciled(w.db());
    });

    it('records a deposit below min_deposit and never credits it', async () => {
      const user = await accountWithKey(w.db(), ['read']);
      const api = client(w.app, user.apiKey, user.secret);
      await api.v3('/v3/auth/payment_addresses', { currency: 'btc' });
      const { address } = (await api.v3('/v3/auth/deposit/info', { currency: 'btc' })).json();
      const small = await admin(w, 'deposit', 'simulate', 'btc', address, '0.00005', '--confirmations', '6');
      expect(small.deposit).toMatchObject({ status: 'below_minimum' });
      await w.wallet().tick();
      expect((await balanceMap(w.db(), user.account.id)).btc).toBeUndefined();
      const items = (await api.v3('/v3/auth/assets-history/deposits', {})).json().items;
      expect(items).toMatchObject([{ amount: 0.00005, status: 'canceled' }]);
    });

    it('uses a destination tag for xrp and matches deposits by it', async () => {
      const a = await accountWithKey(w.db(), ['read']);
      const b = await accountWithKey(w.db(), ['read']);
      const apiA = client(w.app, a.apiKey, a.secret);
      const apiB = client(w.app, b.apiKey, b.secret);
      expect((await apiA.v3('/v3/auth/deposit/info', { currency: 'xrp' })).json()).toEqual({
        confirmations: 1,
        min_deposit: 1,
        address: null,
        memo: null,
      });
      await apiA.v3('/v3/auth/payment_addresses', { currency: 'xrp' });
      await apiB.v3('/v3/auth/payment_addresses', { currency: 'xrp' });
      const infoA = (await apiA.v3('/v3/auth/deposit/info', { currency: 'xrp' })).json();
      const infoB = (await apiB.v3('/v3/auth/deposit/info', { currency: 'xrp' })).json();
      expect(infoA.address).toMatch(/^r[1-9A-HJ-NP-Za-km-z]{24,34}$/);
      expect(infoA.address).toBe(infoB.address);
      expect(infoA.memo).toMatch(/^\d+$/);
      expect(infoA.memo).not.toBe(infoB.memo);
      const out = await admin(
        w,
        'deposit',
        'simulate',
        'xrp',
        infoB.address,
        '30',
        '--memo',
        infoB.memo,
        '--confirmations',
        '1',
      );
      expect(out.deposit).toMatchObject({ status: 'credited', account: b.account.id });
      expect((await balanceMap(w.db(), b.account.id)).xrp).toEqual([30_000_000n, 0n]);
      expect((await balanceMap(w.db(), a.account.id)).xrp).toBeUndefined();
    });

    it('shows EIP-55 addresses for eth and usdt', async () => {
      const user = await accountWithKey(w.db(), ['read']);
      const api = client(w.app, user.apiKey, user.secret);
      for (const currency of ['eth', 'usdt']) {
        await api.v3('/v3/auth/payment_addresses', { currency });
        const { address } = (await api.v3('/v3/auth/deposit/info', { currency })).json();
        expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
        expect(checksumMismatches(address)).toEqual([]);
      }
    });

    it('withdraws: locks the funds, sends once, settles the fee and completes', async () => {
      const user = await accountWithKey(w.db(), ['read', 'withdraw']);
      await credit(w.db(), user.account.id, 'btc', 1n * BTC);
      const api = client(w.app, user.apiKey, user.secret);
      const to = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
      const response = await api.v3('/v3/auth/withdraw', { withdraw_type: 'btc', amount: 0.1, address: to });
      expect(response.statusCode).toBe(200);
      const [result] = response.json();
      expect(result).toMatchObject({ status: 'pending', withdrawal_id: expect.any(Number) });
      const id = result.withdrawal_id as number;
      // fee 0.0005 btc on top: 0.1005 locked
      expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC - 1_005_000_000n, 1_005_000_000n]);
      const queued = (await api.v3('/v3/auth/withdraw/details', { id })).json();
      expect(queued).toMatchObject({
        id,
        destination: to,
        currency: 'btc',
        amount: '0.1',
        fee: '0.0005',
        total_amount: '0.1005',
        status: 'pending',
        txid: '',
        reference_id: '',
      });
      await w.wallet().tick();
      const sent = (await api.v3('/v3/auth/withdraw/details', { id })).json();
      expect(sent.txid).toMatch(/^[0-9a-f]{64}$/);
      expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC - 1_005_000_000n, 0n]);
      await w.wallet().tick();
      expect((await api.v3('/v3/auth/withdraw/details', { id })).json()).toMatchObject({
        status: 'done',
        txid: sent.txid,
      });
      // Only one transfer left for this request.
      const { rows } = await w
        .db()
        .query(`SELECT count(*)::int AS n FROM sandbox_transfers WHERE direction = 'out' AND address = $1`, [
          to,
        ]);
      expect(rows[0]).toEqual({ n: 1 });
      const items = (await api.v3('/v3/auth/assets-history/withdraws', {})).json().items;
      expect(items).toMatchObject([{ id, type: 'withdraw', amount: 0.1, status: 'done', destination: to }]);
      await expectReconciled(w.db());
    });

    it('withdrawall takes the fee from the amount', async () => {
      const user = await accountWithKey(w.db(), ['read', 'withdraw']);
      await credit(w.db(), user.account.id, 'btc', BTC);
      const api = client(w.app, user.apiKey, user.secret);
      for (const flag of [true, 1]) {
        const [result] = (
          await api.v3('/v3/auth/withdraw', {
            withdraw_type: 'btc',
            amount: '0.01',
            address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
            withdrawall: flag,
          })
        ).json();
        const details = (await api.v3('/v3/auth/withdraw/details', { id: result.withdrawal_id })).json();
        expect(details).toMatchObject({ amount: '0.0095', fee: '0.0005', total_amount: '0.01' });
      }
      expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC - 200_000_000n, 200_000_000n]);
    });
  });
}

/**
 * The positions where a hex address's letter case disagrees with EIP-55 (a letter is upper case
 * exactly when the matching nibble of keccak256 of the lower-case hex is 8 or more). Asserted
 * instead of "the address is mixed case": about 1 random address in 4,300 has no upper-case letter.
 */
function checksumMismatches(address: string): number[] {
  const body = address.slice(2);
  const hash = Buffer.from(keccak_256(new TextEncoder().encode(body.toLowerCase()))).toString('hex');
  const wrong: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (!/[a-fA-F]/.test(c)) continue;
    const upper = Number.parseInt(hash[i] as string, 16) >= 8;
    if ((c === c.toUpperCase()) !== upper) wrong.push(i);
  }
  return wrong;
}
