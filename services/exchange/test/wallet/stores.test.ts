import { describe, expect, it } from 'vitest';
import {
  cancelDeposit,
  createPendingDeposit,
  creditDeposit,
  FIAT_DEPOSIT_IDS,
  recordSeenTransfer,
} from '../../src/wallet/deposit-store.js';
import { FundsRefused } from '../../src/wallet/post.js';
import {
  createWithdrawal,
  releaseWithdrawal,
  settleWithdrawal,
  withdrawalById,
} from '../../src/wallet/withdrawal-store.js';
import { credit, newAccount } from '../support/accounts.js';
import { usePostgresTarget } from '../support/targets.js';
import { balanceMap, expectReconciled } from './support.js';

const target = usePostgresTarget();
const UAH = 10n ** 6n; // uah ledger precision 6

describe('wallet stores (the API the fiat side uses)', () => {
  it('credits a pending deposit exactly once under concurrent callers', async () => {
    const db = target.db();
    const account = await newAccount(db);
    const deposit = await db.transaction((tx) =>
      createPendingDeposit(tx, {
        accountId: account.id,
        currency: 'uah',
        amount: 250n * UAH,
        provider: 'payment_card_uah',
        referenceId: 'r-1',
      }),
    );
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => creditDeposit(db, deposit.id, `gateway:r-1`)),
    );
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'already_credited')).toHaveLength(7);
    expect((await balanceMap(db, account.id)).uah).toEqual([250n * UAH, 0n]);
    expect(await cancelDeposit(db, deposit.id)).toBe(false);
    expect(await creditDeposit(db, 987_654)).toBe('unknown');
    await expectReconciled(db);
  });

  it('gives fiat deposits random ids nobody can guess, never reused: a taken id is picked again', async () => {
    const db = target.db();
    const account = await newAccount(db);
    const pending = (pickId?: () => number) =>
      db.transaction((tx) =>
        createPendingDeposit(
          tx,
          { accountId: account.id, currency: 'uah', amount: 100n * UAH, provider: 'payment_card_uah_hpp' },
          pickId,
        ),
      );
    const ids: number[] = [];
    for (let n = 0; n < 20; n += 1) ids.push((await pending()).id);
    for (const id of ids) {
      expect(id).toBeGreaterThanOrEqual(FIAT_DEPOSIT_IDS.min);
      expect(id).toBeLessThanOrEqual(2_147_483_647);
    }
    // Not consecutive, not even ordered: the next id says nothing of the last.
    expect(new Set(ids).size).toBe(20);
    expect(ids.slice(1).some((id, n) => Math.abs(id - ids[n]!) > 1_000)).toBe(true);
    // An id taken already (here on purpose) inserts nothing and another is picked; the first
    // deposit is untouched.
    const picks = [ids[0]!, ids[1]!, FIAT_DEPOSIT_IDS.min + 7];
    const third = await pending(() => picks.shift()!);
    expect(third.id).toBe(FIAT_DEPOSIT_IDS.min + 7);
    expect(picks).toEqual([]);
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM deposits WHERE id = ANY($1)',
      [[ids[0], ids[1]]],
    );
    expect(rows[0]!.n).toBe(2);
    // Always taken: the database's primary key refuses every pick, and the deposit is not recorded.
    await expect(pending(() => ids[2]!)).rejects.toThrow(/no free deposit id/);
    // Crypto deposits keep the sequence, below the fiat range.
    const crypto = await recordSeenTransfer(db, {
      accountId: account.id,
      currency: 'btc',
      amount: 1000n,
      address: 'bc1-test',
      memo: null,
      txid: `tx-${ids[0]}`,
      outputIndex: 0,
      confirmations: 0,
      belowMinimum: false,
    });
    expect(crypto.id).toBeLessThan(FIAT_DEPOSIT_IDS.min);
  });

  it('creates a withdrawal with its lock, refuses one the balance cannot cover, and ends each once', async () => {
    const db = target.db();
    const account = await newAccount(db);
    await credit(db, account.id, 'uah', 1_000n * UAH);
    const make = (amount: bigint) =>
      db.transaction((tx) =>
        createWithdrawal(tx, {
          accountId: account.id,
          currency: 'uah',
          rail: 'fiat',
          provider: 'payment_card_uah',
          destination: '4111 11** **** 1111',
          amount,
          fee: 15n * UAH,
          feeCurrency: 'uah',
          totalAmount: amount + 15n * UAH,
          status: 'queued',
        }),
      );
    await expect(make(990n * UAH)).rejects.toBeInstanceOf(FundsRefused);
    const { rows } = await db.query('SELECT id FROM withdrawals WHERE account_id = $1', [account.id]);
    expect(rows).toEqual([]);
    const first = await make(500n * UAH);
    const second = await make(100n * UAH);
    expect((await balanceMap(db, account.id)).uah).toEqual([370n * UAH, 630n * UAH]);
    expect(await db.transaction((tx) => settleWithdrawal(tx, first.id, 'payout-1'))).toBe(true);
    expect(await db.transaction((tx) => settleWithdrawal(tx, first.id, 'payout-1'))).toBe(false);
    expect(await db.transaction((tx) => releaseWithdrawal(tx, first.id, 'failed'))).toBe(false);
    expect(await db.transaction((tx) => releaseWithdrawal(tx, second.id, 'failed', 'declined'))).toBe(true);
    expect(await db.transaction((tx) => releaseWithdrawal(tx, second.id, 'canceled'))).toBe(false);
    expect((await balanceMap(db, account.id)).uah).toEqual([485n * UAH, 0n]);
    expect(await withdrawalById(db, first.id)).toMatchObject({ status: 'sent', externalId: 'payout-1' });
    expect(await withdrawalById(db, second.id)).toMatchObject({ status: 'failed', failure: 'declined' });
    await expectReconciled(db);
  });
});
