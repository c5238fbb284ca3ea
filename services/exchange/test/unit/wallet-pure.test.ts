import { describe, expect, it } from 'vitest';
import { eip55, generateAddress, isValidAddress, SANDBOX_XRP_ADDRESS } from '../../src/custody/addresses.js';
import { coinText } from '../../src/custody/rpc.js';
import { splitFixedFee } from '../../src/wallet/arithmetic.js';
import { heldFunds, withdrawalLock, withdrawalRelease, withdrawalSettle } from '../../src/wallet/entries.js';

describe('withdrawal arithmetic (fixed fee)', () => {
  it('adds the fee on top without withdrawall and takes it from the amount with it', () => {
    expect(splitFixedFee(1000n, 10n, false, true)).toEqual({
      ok: true,
      received: 1000n,
      fee: 10n,
      total: 1010n,
    });
    expect(splitFixedFee(1000n, 10n, true, true)).toEqual({
      ok: true,
      received: 990n,
      fee: 10n,
      total: 1000n,
    });
    expect(splitFixedFee(10n, 10n, true, true)).toEqual({ ok: false, reason: 'fee_exceeds_amount' });
    expect(splitFixedFee(0n, 10n, false, true)).toEqual({ ok: false, reason: 'not_positive' });
    // A fee in another currency is charged on top in that currency, whatever withdrawall says.
    expect(splitFixedFee(1000n, 5n, true, false)).toEqual({
      ok: true,
      received: 1000n,
      fee: 5n,
      total: 1000n,
    });
  });
});

describe('wallet ledger entries', () => {
  const w = {
    id: 7,
    accountId: 3,
    currency: 'usdt',
    amount: 100n,
    fee: 2n,
    feeCurrency: 'eth',
    totalAmount: 100n,
  };
  it('locks, releases and settles every currency the request holds, balanced and keyed by id', () => {
    expect([...heldFunds(w)]).toEqual([
      ['usdt', 100n],
      ['eth', 2n],
    ]);
    const lock = withdrawalLock(w);
    const release = withdrawalRelease(w, 'canceled');
    const settle = withdrawalSettle(w, 1, 2);
    expect(lock.ok && lock.entry.idempotencyKey).toBe('withdrawal-lock:7');
    expect(release.ok && release.entry.idempotencyKey).toBe('withdrawal-release:7');
    expect(settle.ok && settle.entry.legs).toEqual([
      { accountId: 3, currency: 'usdt', bucket: 'locked', amount: -100n },
      { accountId: 3, currency: 'eth', bucket: 'locked', amount: -2n },
      { accountId: 1, currency: 'usdt', bucket: 'available', amount: 100n },
      { accountId: 2, currency: 'eth', bucket: 'available', amount: 2n },
    ]);
  });
});

describe('sandbox address formats', () => {
  it('generates addresses it validates, in each currency format', () => {
    for (const currency of ['btc', 'ltc', 'eth', 'usdt', 'xrp']) {
      const address = generateAddress(currency);
      expect(isValidAddress(currency, address), `${currency} ${address}`).toBe(true);
    }
    expect(generateAddress('btc')).toMatch(/^bc1q/);
    expect(generateAddress('ltc')).toMatch(/^ltc1q/);
    expect(SANDBOX_XRP_ADDRESS).toMatch(/^r/);
  });

  it('checks EIP-55 against the published test vectors and refuses bad checksums', () => {
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(eip55(address.slice(2))).toBe(address);
      expect(isValidAddress('eth', address)).toBe(true);
    }
    expect(isValidAddress('eth', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toBe(false);
    expect(isValidAddress('btc', 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4')).toBe(true);
    expect(isValidAddress('btc', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2')).toBe(true);
    expect(isValidAddress('btc', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3')).toBe(false);
    expect(isValidAddress('xrp', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh')).toBe(true);
    expect(isValidAddress('xrp', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTi')).toBe(false);
  });

  it('turns RPC coin amounts into exact decimal text', () => {
    expect(coinText(0.12345678)).toBe('0.12345678');
    expect(coinText(1e-7)).toBe('0.0000001');
    expect(coinText(0.00000001)).toBe('0.00000001');
    expect(coinText(20999999.9769)).toBe('20999999.9769');
  });
});
