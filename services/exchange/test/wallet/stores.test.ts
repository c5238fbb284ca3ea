import { describe, expect, it } from 'vitest';
import { cancelDeposit, createPendingDeposit, creditDeposit } from '../../src/wallet/deposit-store.js';
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
