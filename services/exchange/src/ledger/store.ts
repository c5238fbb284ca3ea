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
 * One statement posts a whole entry: the journal row, its legs and the balance changes.
 * - `e` inserts the entry; with a repeated idempotency key it inserts nothing and nothing else happens.
 * - `l` inserts the legs.
 * - `b` upserts the balances in (account, currency) order. The update is guarded: a change that would
 *   take a balance of an account that may not go negative below zero matches no row. The row lock is
 *   taken before the guard is evaluated (and re-evaluated on the newest row version), so concurrent
 *   debits of one balance queue up and never both pass.
 * - the final SELECT aborts the statement (SQLSTATE SVC01) when a guarded update matched no row or a
 *   new balance row would start negative, so the entry is applied completely or not at all, in one
 *   round trip.
 */
const POST_SQL = `
WITH e AS (
  INSERT INTO journal_entries (kind, reason, idempotency_key) VALUES ($1, $2, $3)
  ON CONFLICT (idempotency_key) DO NOTHING RETURNING id
), l AS (
  INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount)
  SELECT e.id, v.account_id, v.currency, v.bucket, v.amount
    FROM e, unnest($4::int[], $5::text[], $6::text[], $7::numeric[]) AS v(account_id, currency, bucket, amount)
  RETURNING 1
), b AS (
  INSERT INTO balances AS bal (account_id, currency, available, locked, may_go_negative)
  SELECT d.account_id, d.currency, d.available, d.locked,
         -- PostgreSQL checks the proposed row against the table CHECK before it detects the conflict;
         -- the flag lets a debit's proposed row through. It is kept only for a row really inserted
         -- with a negative amount, and such a row aborts the statement below.
         coalesce(a.may_go_negative, false) OR d.available < 0 OR d.locked < 0
    FROM e, unnest($8::int[], $9::text[], $10::numeric[], $11::numeric[]) AS d(account_id, currency, available, locked)
    LEFT JOIN accounts a ON a.id = d.account_id
   ORDER BY d.account_id, d.currency
  ON CONFLICT (account_id, currency) DO UPDATE
     SET available = bal.available + excluded.available, locked = bal.locked + excluded.locked
   WHERE bal.may_go_negative
      OR (bal.available + excluded.available >= 0 AND bal.locked + excluded.locked >= 0)
  RETURNING bal.account_id, bal.available, bal.locked
)
SELECT (SELECT id FROM e) AS entry_id,
       CASE WHEN NOT EXISTS (SELECT 1 FROM e) THEN 0
            WHEN (SELECT count(*) FROM b) = $12 AND NOT EXISTS (
              SELECT 1 FROM b JOIN accounts acc ON acc.id = b.account_id
               WHERE NOT acc.may_go_negative AND (b.available < 0 OR b.locked < 0)) THEN 0
            ELSE ledger_refuse('insufficient_funds') END AS refused`;

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

function parameters(entry: JournalEntry): unknown[] {
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
  const { rows } = await sql.query<{ entry_id: number | null }>(POST_SQL, parameters(entry));
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

/**
 * Posts many entries in one statement inside the caller's transaction: entry ids are drawn first
 * (so legs find their entry without relying on RETURNING order), then the entries, their legs, and
 * the balances changed by the net delta per (account, currency), upserted in that order with the
 * same guard as a single posting. A balance below zero at the end refuses the whole statement
 * (SQLSTATE SVC01), which aborts the caller's transaction: callers check funds first, so this is
 * the backstop, not the check.
 */
const POST_BATCH_SQL = `
WITH ids AS MATERIALIZED (
  SELECT g.ord, nextval(pg_get_serial_sequence('journal_entries', 'id')) AS id
    FROM generate_series(1, $1::int) AS g(ord)
), e AS (
  INSERT INTO journal_entries (id, kind, reason)
  SELECT ids.id, v.kind, v.reason
    FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS v(kind, reason, ord) JOIN ids USING (ord)
  RETURNING id
), l AS (
  INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount)
  SELECT ids.id, v.account_id, v.currency, v.bucket, v.amount
    FROM unnest($4::int[], $5::int[], $6::text[], $7::text[], $8::numeric[])
         AS v(ord, account_id, currency, bucket, amount) JOIN ids USING (ord)
  RETURNING 1
), b AS (
  INSERT INTO balances AS bal (account_id, currency, available, locked, may_go_negative)
  SELECT d.account_id, d.currency, d.available, d.locked,
         coalesce(a.may_go_negative, false) OR d.available < 0 OR d.locked < 0
    FROM unnest($9::int[], $10::text[], $11::numeric[], $12::numeric[]) AS d(account_id, currency, available, locked)
    LEFT JOIN accounts a ON a.id = d.account_id
   ORDER BY d.account_id, d.currency
  ON CONFLICT (account_id, currency) DO UPDATE
     SET available = bal.available + excluded.available, locked = bal.locked + excluded.locked
   WHERE bal.may_go_negative
      OR (bal.available + excluded.available >= 0 AND bal.locked + excluded.locked >= 0)
  RETURNING bal.account_id, bal.available, bal.locked
)
SELECT CASE WHEN (SELECT count(*) FROM e) = $1 AND (SELECT count(*) FROM l) = $13
             AND (SELECT count(*) FROM b) = $14 AND NOT EXISTS (
              SELECT 1 FROM b JOIN accounts acc ON acc.id = b.account_id
               WHERE NOT acc.may_go_negative AND (b.available < 0 OR b.locked < 0)) THEN 0
            ELSE ledger_refuse('insufficient_funds') END AS refused`;

export async function postBatchWithin(tx: Sql, entries: readonly JournalEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const legs: { ord: number; leg: JournalEntry['legs'][number] }[] = [];
  for (const [index, entry] of entries.entries()) {
    const checked = validateEntry(entry);
    if (!checked.ok) throw new Error(`invalid ledger entry ${entry.reason}: ${checked.detail}`);
    for (const leg of entry.legs) legs.push({ ord: index + 1, leg });
  }
  const changed = netBalanceChanges(legs.map((l) => l.leg));
  await tx.query(POST_BATCH_SQL, [
    entries.length,
    entries.map((e) => e.kind),
    entries.map((e) => e.reason),
    legs.map((l) => l.ord),
    legs.map((l) => l.leg.accountId),
    legs.map((l) => l.leg.currency),
    legs.map((l) => l.leg.bucket),
    legs.map((l) => l.leg.amount.toString()),
    changed.map((d) => d.accountId),
    changed.map((d) => d.currency),
    changed.map((d) => d.available.toString()),
    changed.map((d) => d.locked.toString()),
    legs.length,
    changed.length,
  ]);
}

/**
 * Available funds of several balances, row-locked (in account, currency order, so concurrent callers
 * cannot deadlock on them) until the transaction ends. Missing balances are absent from the map.
 */
export async function lockAvailableMany(
  tx: Sql,
  keys: readonly { accountId: number; currency: string }[],
): Promise<Map<string, bigint>> {
  if (keys.length === 0) return new Map();
  const { rows } = await tx.query<{ account_id: number; currency: string; available: string }>(
    `SELECT b.account_id, b.currency, b.available::text FROM balances b
       JOIN unnest($1::int[], $2::text[]) AS k(account_id, currency)
         ON b.account_id = k.account_id AND b.currency = k.currency
      ORDER BY b.account_id, b.currency FOR UPDATE OF b`,
    [keys.map((k) => k.accountId), keys.map((k) => k.currency)],
  );
  return new Map(rows.map((r) => [`${r.account_id}:${r.currency}`, BigInt(r.available)]));
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
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ code: string; precision: number }>(
      'SELECT code, precision FROM currencies',
    );
    const stored = new Map(rows.map((row) => [row.code, row.precision]));
    for (const currency of currencies) {
      const precision = stored.get(currency.code);
      if (precision === undefined) {
        await tx.query('INSERT INTO currencies (code, precision) VALUES ($1, $2)', [
          currency.code,
          currency.precision,
        ]);
      } else if (precision !== currency.precision) {
        throw new Error(
          `currency ${currency.code}: the ledger precision is ${currency.precision} in the reference file but ` +
            `${precision} in the ledger; changing it would change the value of stored amounts`,
        );
      }
    }
  });
}
