import { migrate } from '@platform/sql-storage/migrate';
import { describe, expect, it } from 'vitest';
import { DuplicateAccountError, findAccount, systemAccountId } from '../../src/accounts/store.js';
import {
  consumeNonce,
  findApiKey,
  listApiKeys,
  revokeApiKey,
  setApiKeyEnabled,
} from '../../src/apikeys/store.js';
import { type Database, type Sql, sqlState } from '../../src/db/database.js';
import { schema } from '../../src/db/open.js';
import { adjustment, lockFunds, settleFill, transfer } from '../../src/ledger/entry.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf, postEntries, postEntry } from '../../src/ledger/store.js';
import { accountWithKey, credit, newAccount } from '../support/accounts.js';
import { secretBox, type Target } from '../support/targets.js';

async function balance(target: Target, accountId: number, currency: string) {
  const found = (await balancesOf(target.db(), accountId)).find((b) => b.currency === currency);
  return { available: found?.available ?? 0n, locked: found?.locked ?? 0n };
}

async function entryCount(target: Target): Promise<number> {
  const { rows } = await target.db().query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries');
  return rows[0]!.n;
}

/**
 * The real database, observed: counts transactions it aborted as deadlocks (40P01), and holds the
 * first `parties` transactions just before their second ledger entry until all of them got there
 * (a readiness barrier, not a sleep), so their first entries' row locks are all held at once.
 */
function observeDeadlocks(db: Database, parties: number) {
  let deadlocks = 0;
  let arrived = 0;
  let release = () => {};
  const allArrived = new Promise<void>((resolve) => {
    release = resolve;
  });
  const observed: Database = {
    kind: db.kind,
    query: <Row>(text: string, params?: readonly unknown[]) => db.query<Row>(text, params),
    close: () => db.close(),
    ordered: () => db.ordered(),
    async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
      let savepoints = 0;
      try {
        return await db.transaction((tx) =>
          fn({
            async query<Row>(text: string, params?: readonly unknown[]) {
              if (text === 'SAVEPOINT ledger_entry' && ++savepoints === 2 && arrived < parties) {
                arrived += 1;
                if (arrived === parties) release();
                await allArrived;
              }
              return tx.query<Row>(text, params);
            },
          }),
        );
      } catch (error) {
        if (sqlState(error) === '40P01') deadlocks += 1;
        throw error;
      }
    },
  };
  return {
    db: observed,
    get deadlocks() {
      return deadlocks;
    },
  };
}

/** The storage contract: every behaviour the service relies on, run against PostgreSQL and PGlite. */
export function storageContract(target: Target): void {
  describe(`storage contract (${target.name})`, () => {
    it('applies migrations once and records their versions', async () => {
      expect(await migrate(target.db(), schema)).toEqual([]);
      const { rows } = await target.db().query<{ version: number }>('SELECT version FROM schema_migrations');
      expect(rows.map((row) => row.version)).toContain(1);
    });

    it('creates accounts and refuses a duplicate e-mail', async () => {
      const account = await newAccount(target.db());
      expect((await findAccount(target.db(), account.email.toUpperCase()))?.id).toBe(account.id);
      expect((await findAccount(target.db(), account.svcid))?.id).toBe(account.id);
      await expect(
        target.db().transaction(async (tx) => {
          const { createAccount } = await import('../../src/accounts/store.js');
          return createAccount(tx, { email: account.email });
        }),
      ).rejects.toBeInstanceOf(DuplicateAccountError);
    });

    it('stores API secrets encrypted and decrypts them with the master key', async () => {
      const { apiKey, secret } = await accountWithKey(target.db(), ['read', 'trade']);
      const stored = await findApiKey(target.db(), apiKey);
      expect(stored?.secretBox).not.toContain(secret);
      expect(secretBox.open(stored!.secretBox, apiKey)).toBe(secret);
      expect(() => secretBox.open(stored!.secretBox, 'another-key')).toThrow();
      expect(stored?.scopes).toEqual(['read', 'trade']);
    });

    it('disables, enables and revokes keys', async () => {
      const { apiKey, account } = await accountWithKey(target.db());
      expect(await setApiKeyEnabled(target.db(), apiKey, false)).toBe(true);
      expect((await findApiKey(target.db(), apiKey))?.enabled).toBe(false);
      expect(await setApiKeyEnabled(target.db(), apiKey, true)).toBe(true);
      expect(await revokeApiKey(target.db(), apiKey)).toBe(true);
      expect(await setApiKeyEnabled(target.db(), apiKey, true)).toBe(false);
      const [listed] = await listApiKeys(target.db(), account.id);
      expect(listed).toMatchObject({ enabled: false, revoked: true });
    });

    it('accepts only increasing nonces per key and protocol, one winner among racers', async () => {
      const { keyId } = await accountWithKey(target.db());
      expect(await consumeNonce(target.db(), keyId, 'v3', 1000)).toBe('recorded');
      expect(await consumeNonce(target.db(), keyId, 'v3', 1000)).toBe('reused');
      expect(await consumeNonce(target.db(), keyId, 'v3', 999)).toBe('reused');
      expect(await consumeNonce(target.db(), keyId, 'v2', 1000)).toBe('recorded');
      const racers = await Promise.all(
        Array.from({ length: 10 }, () => consumeNonce(target.db(), keyId, 'v3', 2000)),
      );
      expect(racers.filter((r) => r === 'recorded')).toHaveLength(1);
    });

    it('refuses the nonce of a disabled, revoked or unknown key, saying which', async () => {
      const { keyId, apiKey } = await accountWithKey(target.db());
      await setApiKeyEnabled(target.db(), apiKey, false);
      expect(await consumeNonce(target.db(), keyId, 'v3', 1000)).toBe('disabled');
      await setApiKeyEnabled(target.db(), apiKey, true);
      expect(await consumeNonce(target.db(), keyId, 'v3', 1000)).toBe('recorded');
      await revokeApiKey(target.db(), apiKey);
      expect(await consumeNonce(target.db(), keyId, 'v3', 2000)).toBe('revoked');
      expect(await consumeNonce(target.db(), 987_654_321, 'v3', 2000)).toBe('unknown');
    });

    it('posts balanced entries: credit, lock, unlock, transfer', async () => {
      const db = target.db();
      const a = await newAccount(db);
      const b = await newAccount(db);
      await credit(db, a.id, 'btc', 100_000_000n);
      const lock = lockFunds(a.id, 'btc', 30_000_000n, 'order 1');
      expect(lock.ok && (await postEntry(db, lock.entry)).ok).toBe(true);
      expect(await balance(target, a.id, 'btc')).toEqual({ available: 70_000_000n, locked: 30_000_000n });
      const unlock = lockFunds(a.id, 'btc', 10_000_000n, 'order 1 cancelled', true);
      expect(unlock.ok && (await postEntry(db, unlock.entry)).ok).toBe(true);
      const move = transfer(a.id, b.id, 'btc', 80_000_000n, 'transfer');
      expect(move.ok && (await postEntry(db, move.entry)).ok).toBe(true);
      expect(await balance(target, a.id, 'btc')).toEqual({ available: 0n, locked: 20_000_000n });
      expect(await balance(target, b.id, 'btc')).toEqual({ available: 80_000_000n, locked: 0n });
    });

    it('settles a fill between locked funds with fees to the fee account, once per idempotency key', async () => {
      const db = target.db();
      const buyer = await newAccount(db);
      const seller = await newAccount(db);
      const fees = await systemAccountId(db, 'fees');
      const feesBefore = await balance(target, fees, 'uah');
      await credit(db, buyer.id, 'uah', 1_000_000n);
      await credit(db, seller.id, 'btc', 50_000_000n);
      for (const built of [
        lockFunds(buyer.id, 'uah', 1_000_000n, 'bid'),
        lockFunds(seller.id, 'btc', 50_000_000n, 'ask'),
      ]) {
        expect(built.ok && (await postEntry(db, built.entry)).ok).toBe(true);
      }
      const fill = settleFill(
        {
          buyerId: buyer.id,
          sellerId: seller.id,
          feeAccountId: fees,
          base: 'btc',
          quote: 'uah',
          baseAmount: 10_000_000n,
          quoteAmount: 600_000n,
          buyerFee: 25_000n,
          sellerFee: 1_500n,
          idempotencyKey: `fill-${buyer.id}-${seller.id}`,
        },
        'trade 1',
      );
      if (!fill.ok) throw new Error(fill.detail);
      const first = await postEntry(db, fill.entry);
      const again = await postEntry(db, fill.entry);
      expect(first.ok && again.ok && again.duplicate && again.entryId === first.entryId).toBe(true);
      expect(await balance(target, buyer.id, 'btc')).toEqual({ available: 9_975_000n, locked: 0n });
      expect(await balance(target, buyer.id, 'uah')).toEqual({ available: 0n, locked: 400_000n });
      expect(await balance(target, seller.id, 'uah')).toEqual({ available: 598_500n, locked: 0n });
      expect(await balance(target, seller.id, 'btc')).toEqual({ available: 0n, locked: 40_000_000n });
      expect((await balance(target, fees, 'uah')).available - feesBefore.available).toBe(1_500n);
    });

    it('refuses an overdraft, an unknown currency and an unbalanced entry, writing nothing', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'eth', 5n);
      const external = await systemAccountId(db, 'external');
      const before = await entryCount(target);
      const overdraft = adjustment(a.id, external, 'eth', -6n, 'too much');
      expect(overdraft.ok && (await postEntry(db, overdraft.entry))).toMatchObject({
        ok: false,
        error: 'insufficient_funds',
      });
      const unknown = adjustment(a.id, external, 'doge', 1n, 'no such coin');
      expect(unknown.ok && (await postEntry(db, unknown.entry))).toMatchObject({
        ok: false,
        error: 'unknown_currency',
      });
      const unbalanced = await postEntry(db, {
        kind: 'broken',
        reason: 'test',
        legs: [
          { accountId: a.id, currency: 'eth', bucket: 'available', amount: 1n },
          { accountId: external, currency: 'eth', bucket: 'available', amount: -2n },
        ],
      });
      expect(unbalanced).toMatchObject({ ok: false, error: 'invalid_entry' });
      const neverFunded = adjustment(a.id, external, 'xrp', -1n, 'no xrp row yet');
      expect(neverFunded.ok && (await postEntry(db, neverFunded.entry))).toMatchObject({
        ok: false,
        error: 'insufficient_funds',
      });
      const lockUnfunded = lockFunds(a.id, 'usd', 1n, 'no usd row yet');
      expect(lockUnfunded.ok && (await postEntry(db, lockUnfunded.entry))).toMatchObject({ ok: false });
      expect(await entryCount(target)).toBe(before);
      expect(await balance(target, a.id, 'eth')).toEqual({ available: 5n, locked: 0n });
      const { rows } = await db.query<{ currency: string; may_go_negative: boolean }>(
        'SELECT currency, may_go_negative FROM balances WHERE account_id = $1',
        [a.id],
      );
      expect(rows).toEqual([{ currency: 'eth', may_go_negative: false }]);
    });

    it('posts a batch in one commit, rolling back only the refused entries', async () => {
      const db = target.db();
      const a = await newAccount(db);
      const b = await newAccount(db);
      await credit(db, a.id, 'eth', 10n);
      const before = await entryCount(target);
      const entries = [
        transfer(a.id, b.id, 'eth', 4n, 'one'),
        transfer(a.id, b.id, 'eth', 7n, 'too much'),
        transfer(a.id, b.id, 'eth', 6n, 'rest'),
      ];
      const results = await postEntries(
        db,
        entries.map((built) => {
          if (!built.ok) throw new Error(built.detail);
          return built.entry;
        }),
      );
      expect(results.map((r) => r.ok)).toEqual([true, false, true]);
      expect(results[1]).toMatchObject({ error: 'insufficient_funds' });
      expect(await entryCount(target)).toBe(before + 2);
      expect(await balance(target, a.id, 'eth')).toEqual({ available: 0n, locked: 0n });
      expect(await balance(target, b.id, 'eth')).toEqual({ available: 10n, locked: 0n });
      expect((await reconcile(db)).ok).toBe(true);
    });

    it('survives batches taking the same balances in opposite orders (on PostgreSQL a deadlock really happens)', async () => {
      const db = target.db();
      const a = await newAccount(db);
      const b = await newAccount(db);
      await credit(db, a.id, 'btc', 1_000n);
      await credit(db, b.id, 'btc', 1_000n);
      const lock = (accountId: number, unlock: boolean) => {
        const built = lockFunds(accountId, 'btc', 1n, 'cross', unlock);
        if (!built.ok) throw new Error(built.detail);
        return built.entry;
      };
      // Each entry locks one balance row; batch one takes a then b, batch two b then a, holding each
      // until commit. On PostgreSQL both are held after their first entry until both have taken it,
      // so each then waits for the other: PostgreSQL aborts one as a deadlock every run, and the
      // retry must absorb it. PGlite runs one transaction at a time: no deadlock is possible there.
      const forward = [lock(a.id, false), lock(b.id, false), lock(a.id, true), lock(b.id, true)];
      const backward = [lock(b.id, false), lock(a.id, false), lock(b.id, true), lock(a.id, true)];
      const observed = observeDeadlocks(db, target.name === 'postgres' ? 2 : 0);
      const outcomes = await Promise.all([
        postEntries(observed.db, forward),
        postEntries(observed.db, backward),
      ]);
      if (target.name === 'postgres') expect(observed.deadlocks).toBeGreaterThanOrEqual(1);
      expect(outcomes.flat().every((result) => result.ok)).toBe(true);
      expect(await balance(target, a.id, 'btc')).toEqual({ available: 1_000n, locked: 0n });
      expect(await balance(target, b.id, 'btc')).toEqual({ available: 1_000n, locked: 0n });
      expect((await reconcile(db)).ok).toBe(true);
    });

    it('lets 50 concurrent debits race for one balance without going below zero', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'usdt', 10n);
      const external = await systemAccountId(db, 'external');
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const built = adjustment(a.id, external, 'usdt', -1n, `debit ${i}`);
          if (!built.ok) throw new Error(built.detail);
          return postEntry(db, built.entry);
        }),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(results.filter((r) => !r.ok && r.error === 'insufficient_funds')).toHaveLength(40);
      expect(await balance(target, a.id, 'usdt')).toEqual({ available: 0n, locked: 0n });
      expect((await reconcile(db)).ok).toBe(true);
    });

    it('reconciles the whole database and reports a tampered balance', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'xrp', 7n);
      const clean = await reconcile(db);
      expect(clean).toMatchObject({ ok: true, problems: [] });
      expect(clean.entries).toBeGreaterThan(0);
      await db.query(
        `UPDATE balances SET available = available + 1 WHERE account_id = $1 AND currency = 'xrp'`,
        [a.id],
      );
      const report = await reconcile(db);
      expect(report.ok).toBe(false);
      expect(report.problems.join('\n')).toContain(`account ${a.id} xrp`);
      await db.query(
        `UPDATE balances SET available = available - 1 WHERE account_id = $1 AND currency = 'xrp'`,
        [a.id],
      );
      expect((await reconcile(db)).ok).toBe(true);
    });

    /** The entry that `credit` posted last for `accountId` and its legs' ids, for tampering. */
    async function lastCredit(accountId: number) {
      const { rows } = await target.db().query<{ entry_id: number; own: number; other: number }>(
        `SELECT l.entry_id, l.id AS own, o.id AS other
           FROM journal_legs l JOIN journal_legs o ON o.entry_id = l.entry_id AND o.id <> l.id
          WHERE l.account_id = $1 ORDER BY l.entry_id DESC LIMIT 1`,
        [accountId],
      );
      return rows[0]!;
    }

    it('reports an entry whose legs do not sum to zero (balances kept equal to the legs)', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'xrp', 7n);
      const { entry_id: entryId, own } = await lastCredit(a.id);
      // The user's leg says 8 and the balance follows it, so only the entry itself is wrong.
      await db.query('UPDATE journal_legs SET amount = amount + 1 WHERE id = $1', [own]);
      await db.query(
        `UPDATE balances SET available = available + 1 WHERE account_id = $1 AND currency = 'xrp'`,
        [a.id],
      );
      const report = await reconcile(db);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([`entry ${entryId}: xrp legs sum to 1, not 0`]);
      await db.query('UPDATE journal_legs SET amount = amount - 1 WHERE id = $1', [own]);
      await db.query(
        `UPDATE balances SET available = available - 1 WHERE account_id = $1 AND currency = 'xrp'`,
        [a.id],
      );
      expect((await reconcile(db)).ok).toBe(true);
    });

    it('reports an entry left with one leg, and an entry with none', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'xrp', 7n);
      const { entry_id: entryId, other } = await lastCredit(a.id);
      const removed = await db.query<{ account_id: number; amount: string }>(
        'DELETE FROM journal_legs WHERE id = $1 RETURNING account_id, amount::text',
        [other],
      );
      const { account_id: external, amount } = removed.rows[0]!;
      // The external account's balance follows its remaining legs, so no balance is reported.
      await db.query(
        `UPDATE balances SET available = available - $2 WHERE account_id = $1 AND currency = 'xrp'`,
        [external, amount],
      );
      const empty = await db.query<{ id: number }>(
        `INSERT INTO journal_entries (kind, reason) VALUES ('adjustment', 'tampered: no legs') RETURNING id`,
      );
      const emptyId = empty.rows[0]!.id;
      const report = await reconcile(db);
      expect(report.ok).toBe(false);
      expect(report.problems).toContain(`entry ${entryId}: has 1 leg(s)`);
      expect(report.problems).toContain(`entry ${emptyId}: has 0 leg(s)`);
      // One leg can never sum to zero (a leg is never 0), so that is reported too; nothing else is.
      expect(report.problems).toHaveLength(3);
      await db.query('DELETE FROM journal_entries WHERE id = $1', [emptyId]);
      await db.query(
        `INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount) VALUES ($1, $2, 'xrp', 'available', $3)`,
        [entryId, external, amount],
      );
      await db.query(
        `UPDATE balances SET available = available + $2 WHERE account_id = $1 AND currency = 'xrp'`,
        [external, amount],
      );
      expect((await reconcile(db)).ok).toBe(true);
    });

    it('reports a negative balance of an account that may not go negative, legs and balance agreeing', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'xrp', 7n);
      const external = await systemAccountId(db, 'external');
      // A balanced entry taking 10 from a balance of 7, its balances following its legs: the ledger
      // would refuse it, so it is written by hand (the balance row's own flag lets the CHECK pass).
      const entry = await db.query<{ id: number }>(
        `INSERT INTO journal_entries (kind, reason) VALUES ('adjustment', 'tampered: overdraw') RETURNING id`,
      );
      const entryId = entry.rows[0]!.id;
      await db.query(
        `INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount)
         VALUES ($1, $2, 'xrp', 'available', -10), ($1, $3, 'xrp', 'available', 10)`,
        [entryId, a.id, external],
      );
      await db.query(
        `UPDATE balances SET may_go_negative = true, available = available - 10 WHERE account_id = $1 AND currency = 'xrp'`,
        [a.id],
      );
      await db.query(
        `UPDATE balances SET available = available + 10 WHERE account_id = $1 AND currency = 'xrp'`,
        [external],
      );
      expect(await balance(target, a.id, 'xrp')).toEqual({ available: -3n, locked: 0n });
      const report = await reconcile(db);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([`account ${a.id} xrp: negative balance`]);
      await db.query('DELETE FROM journal_legs WHERE entry_id = $1', [entryId]);
      await db.query('DELETE FROM journal_entries WHERE id = $1', [entryId]);
      await db.query(
        `UPDATE balances SET may_go_negative = false, available = available + 10 WHERE account_id = $1 AND currency = 'xrp'`,
        [a.id],
      );
      await db.query(
        `UPDATE balances SET available = available - 10 WHERE account_id = $1 AND currency = 'xrp'`,
        [external],
      );
      expect((await reconcile(db)).ok).toBe(true);
    });

    it('reports a leg without its entry and an order without its account (no foreign keys on those)', async () => {
      const db = target.db();
      const a = await newAccount(db);
      await credit(db, a.id, 'xrp', 7n);
      // Two legs that cancel out, so only the missing entry is wrong.
      await db.query(
        `INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount)
         VALUES (987654321, $1, 'xrp', 'available', 1), (987654321, $1, 'xrp', 'available', -1)`,
        [a.id],
      );
      await db.query(
        `INSERT INTO orders (id, market, account_id, side, kind, price, amount, state, created_at, updated_at)
         VALUES (987654321, 'btcuah', 987654, 'buy', 'limit', 1, 1, 'wait', 0, 0)`,
      );
      const report = await reconcile(db);
      expect(report.ok).toBe(false);
      expect(report.problems).toContain('order 987654321: its account does not exist');
      expect(report.problems.filter((p) => p.endsWith(': its entry does not exist'))).toHaveLength(2);
      await db.query('DELETE FROM journal_legs WHERE entry_id = 987654321');
      await db.query('DELETE FROM orders WHERE id = 987654321');
      expect((await reconcile(db)).ok).toBe(true);
    });
  });
}
