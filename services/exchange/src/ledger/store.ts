import { setTimeout as sleep } from 'node:timers/promises';
import type { Database, Sql } from '../db/database.js';
import type { ReferenceData } from '../reference/load.js';
import { type JournalEntry, validateEntry } from './entry.js';

export type PostResult =
  | { ok: true; entryId: number; duplicate: boolean }
  | {
      ok: false;
      error: 'insufficient_funds' | 'unknown_currency' | 'unknown_account' | 'invalid_entry';
      detail: string;
    };

export interface Balance {
  readonly currency: string;
  readonly available: bigint;
  readonly locked: bigint;
}

/**
 * The common table expressions that post one entry inside a larger statement, with parameters
 * `$first` to `$first + 11` (see `postingParameters`):
 * - `e` inserts the entry; with a repeated idempotency key, or no legs at all, it inserts nothing and
 *   nothing else happens.
 * - `l` inserts the legs.
 * - `b` upserts the balances in (account, currency) order. The update is guarded: a change that would
 *   take a balance of an account that may not go negative below zero matches no row. The row lock is
 *   taken before the guard is evaluated (and re-evaluated on the newest row version), so concurrent
 *   debits of one balance queue up and never both pass. It returns each changed balance as it is now.
 * Statements using them must refuse themselves unless `postingApplied(first)` holds, so an entry is
 * applied completely or not at all. Accounts are looked up by scalar subqueries, one primary-key
 * lookup per balance whatever the table's size (see 005_keyed_batch_updates.sql).
 */
export function postingCtes(first: number): string {
  const $ = (offset: number) => `$${first + offset}`;
  return `e AS (
  INSERT INTO journal_entries (kind, reason, idempotency_key)
  SELECT ${$(0)}, ${$(1)}, ${$(2)} WHERE cardinality(${$(3)}::int[]) > 0
  ON CONFLICT (idempotency_key) DO NOTHING RETURNING id
), l AS (
  INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount)
  SELECT e.id, v.account_id, v.currency, v.bucket, v.amount
    FROM e, unnest(${$(3)}::int[], ${$(4)}::text[], ${$(5)}::text[], ${$(6)}::numeric[]) AS v(account_id, currency, bucket, amount)
  RETURNING 1
), b AS (
  INSERT INTO balances AS bal (account_id, currency, available, locked, may_go_negative)
  SELECT d.account_id, d.currency, d.available, d.locked,
         -- PostgreSQL checks the proposed row against the table CHECK before it detects the conflict;
         -- the flag lets a debit's proposed row through. It is kept only for a row really inserted
         -- with a negative amount, and such a row refuses the statement.
         coalesce((SELECT a.may_go_negative FROM accounts a WHERE a.id = d.account_id), false)
           OR d.available < 0 OR d.locked < 0
    FROM e, unnest(${$(7)}::int[], ${$(8)}::text[], ${$(9)}::numeric[], ${$(10)}::numeric[]) AS d(account_id, currency, available, locked)
   ORDER BY d.account_id, d.currency
  ON CONFLICT (account_id, currency) DO UPDATE
     SET available = bal.available + excluded.available, locked = bal.locked + excluded.locked
   WHERE bal.may_go_negative
      OR (bal.available + excluded.available >= 0 AND bal.locked + excluded.locked >= 0)
  RETURNING bal.account_id, bal.currency, bal.available, bal.locked
)`;
}

/**
 * True when the entry of `postingCtes(first)` changed every balance it names (no guard refused one)
 * and left none of an account that may not go negative below zero; also true when `e` inserted
 * nothing (a repeated idempotency key or an empty entry).
 */
export function postingApplied(first: number): string {
  return `(NOT EXISTS (SELECT 1 FROM e) OR ((SELECT count(*) FROM b) = $${first + 11} AND NOT EXISTS (
    SELECT 1 FROM b WHERE (b.available < 0 OR b.locked < 0)
       AND NOT (SELECT acc.may_go_negative FROM accounts acc WHERE acc.id = b.account_id))))`;
}

/**
 * One statement posts a whole entry; the final SELECT aborts it (SQLSTATE SVC01) when the posting was
 * not applied whole, in one round trip. `entry_id` is null when the idempotency key was seen before.
 */
const POST_SQL = `WITH ${postingCtes(1)}
SELECT (SELECT id FROM e) AS entry_id,
       CASE WHEN ${postingApplied(1)} THEN 0 ELSE ledger_refuse('insufficient_funds') END AS refused`;

interface DatabaseError {
  code?: string;
  constraint?: string;
}

/** Maps the database's refusals of a posting to results; other errors are real failures. */
function refusal(error: unknown): Extract<PostResult, { ok: false }> | undefined {
  const { code, constraint = '' } = (error ?? {}) as DatabaseError;
  if (code === 'SVC01' || (code === '23514' && constraint === 'balances_check')) {
    return { ok: false, error: 'insufficient_funds', detail: 'a balance would go below zero' };
  }
  if (code === '23503' && constraint.endsWith('currency_fkey')) {
    return { ok: false, error: 'unknown_currency', detail: 'the entry names an unknown currency' };
  }
  if (code === '23503' && constraint.endsWith('account_id_fkey')) {
    return { ok: false, error: 'unknown_account', detail: 'the entry names an unknown account' };
  }
  return undefined;
}

/**
 * A batch holds its balance locks until it commits, so two batches (or a batch and a single posting)
 * taking the same balances in different orders can deadlock; PostgreSQL then aborts one of them
 * (40P01). The aborted transaction changed nothing, so it is run again. Callers that post batches
 * concurrently should still take balances in one order where they can: each deadlock costs
 * PostgreSQL's deadlock_timeout (1 s by default).
 */
async function retryOnDeadlock<T>(run: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      const code = (error as DatabaseError | undefined)?.code;
      if ((code !== '40P01' && code !== '40001') || attempt >= attempts) throw error;
      // A random pause so the two victims of one deadlock do not collide again at once.
      await sleep(Math.random() * 10 * attempt);
    }
  }
}

interface BalanceChange {
  accountId: number;
  currency: string;
  available: bigint;
  locked: bigint;
}

/** Net change per account and currency over `legs`; balances whose net change is zero are left out. */
function netBalanceChanges(legs: Iterable<JournalEntry['legs'][number]>): BalanceChange[] {
  const deltas = new Map<string, BalanceChange>();
  for (const leg of legs) {
    const key = `${leg.accountId}:${leg.currency}`;
    const delta = deltas.get(key) ?? {
      accountId: leg.accountId,
      currency: leg.currency,
      available: 0n,
      locked: 0n,
    };
    delta[leg.bucket] += leg.amount;
    deltas.set(key, delta);
  }
  return [...deltas.values()].filter((d) => d.available !== 0n || d.locked !== 0n);
}

/** The 12 parameters of `postingCtes` for `entry`; without an entry, the CTEs post nothing. */
export function postingParameters(entry: JournalEntry | undefined): unknown[] {
  if (!entry) return ['none', 'none', null, [], [], [], [], [], [], [], [], 0];
  const changed = netBalanceChanges(entry.legs);
  return [
    entry.kind,
    entry.reason,
    entry.idempotencyKey ?? null,
    entry.legs.map((leg) => leg.accountId),
    entry.legs.map((leg) => leg.currency),
    entry.legs.map((leg) => leg.bucket),
    entry.legs.map((leg) => leg.amount.toString()),
    changed.map((d) => d.accountId),
    changed.map((d) => d.currency),
    changed.map((d) => d.available.toString()),
    changed.map((d) => d.locked.toString()),
    changed.length,
  ];
}

async function postOne(sql: Sql, entry: JournalEntry): Promise<PostResult> {
  const { rows } = await sql.query<{ entry_id: number | null }>(POST_SQL, postingParameters(entry));
  const entryId = rows[0]?.entry_id;
  if (entryId !== null && entryId !== undefined) return { ok: true, entryId, duplicate: false };
  const existing = await sql.query<{ id: number }>(
    'SELECT id FROM journal_entries WHERE idempotency_key = $1',
    [entry.idempotencyKey],
  );
  return { ok: true, entryId: existing.rows[0]!.id, duplicate: true };
}

/**
 * Posts one journal entry atomically (one statement, one commit): the entry, its legs and the running
 * balances change together or not at all. A balance that would go below zero refuses the whole entry
 * (`insufficient_funds`); concurrent postings on one balance queue on its row lock.
 */
export async function postEntry(db: Database, entry: JournalEntry): Promise<PostResult> {
  const checked = validateEntry(entry);
  if (!checked.ok) return { ok: false, error: 'invalid_entry', detail: checked.detail };
  try {
    return await retryOnDeadlock(() => postOne(db, entry));
  } catch (error) {
    const refused = refusal(error);
    if (refused) return refused;
    throw error;
  }
}

/**
 * Posts several entries in one transaction (one commit, one fsync: the group commit of the matching
 * engine). Each entry runs under its own savepoint, so a refused entry is rolled back alone and the
 * others commit; results come back in order.
 */
export async function postEntries(db: Database, entries: readonly JournalEntry[]): Promise<PostResult[]> {
  const results: PostResult[] = entries.map((entry) => {
    const checked = validateEntry(entry);
    return checked.ok
      ? { ok: true, entryId: 0, duplicate: false }
      : { ok: false, error: 'invalid_entry', detail: checked.detail };
  });
  const valid = results.map((result) => result.ok);
  await retryOnDeadlock(() =>
    db.transaction(async (tx) => {
      for (const [index, entry] of entries.entries()) {
        if (!valid[index]) continue;
        await tx.query('SAVEPOINT ledger_entry');
        try {
          results[index] = await postOne(tx, entry);
          await tx.query('RELEASE SAVEPOINT ledger_entry');
        } catch (error) {
          const refused = refusal(error);
          if (!refused) throw error;
          await tx.query('ROLLBACK TO SAVEPOINT ledger_entry');
          results[index] = refused;
        }
      }
    }),
  );
  return results;
}

/** Balances of one account, one row per currency it ever held. */
export async function balancesOf(db: Sql, accountId: number): Promise<Balance[]> {
  const { rows } = await db.query<{ currency: string; available: string; locked: string }>(
    'SELECT currency, available::text, locked::text FROM balances WHERE account_id = $1 ORDER BY currency',
    [accountId],
  );
  return rows.map((row) => ({
    currency: row.currency,
    available: BigInt(row.available),
    locked: BigInt(row.locked),
  }));
}

/**
 * Makes the ledger's currency table match the reference data. A currency's precision cannot change
 * once recorded: stored minor units would silently change value.
 */
export async function syncCurrencies(
  db: Database,
  reference: Pick<ReferenceData, 'currencies' | 'ledgerPrecision'>,
): Promise<void> {
  const currencies = reference.currencies.map((c) => ({
    code: c.code,
    precision: reference.ledgerPrecision(c.code),
  }));
  // ON CONFLICT: nodes started together on a new database all find the table empty; the first insert
  // wins and the others wait for it, then compare against what it recorded.
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO currencies (code, precision)
       SELECT * FROM unnest($1::text[], $2::int[]) ON CONFLICT (code) DO NOTHING`,
      [currencies.map((c) => c.code), currencies.map((c) => c.precision)],
    );
    const { rows } = await tx.query<{ code: string; precision: number }>(
      'SELECT code, precision FROM currencies',
    );
    const stored = new Map(rows.map((row) => [row.code, row.precision]));
    for (const currency of currencies) {
      const precision = stored.get(currency.code);
      if (precision !== currency.precision) {
        throw new Error(
          `currency ${currency.code}: the ledger precision is ${currency.precision} in the reference file but ` +
            `${precision} in the ledger; changing it would change the value of stored amounts`,
        );
      }
    }
  });
}
