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

class Refused extends Error {
  constructor(readonly result: Extract<PostResult, { ok: false }>) {
    super(result.detail);
  }
}

/**
 * Posts one journal entry atomically: the entry, its legs and the running balances change together
 * or not at all. Balance rows are updated in (account, currency) order; each UPDATE takes the row
 * lock, so concurrent postings on one balance queue up and each sees the result of the previous one.
 * A balance that would go below zero refuses the whole entry (`insufficient_funds`).
 */
export async function postEntry(db: Database, entry: JournalEntry): Promise<PostResult> {
  const checked = validateEntry(entry);
  if (!checked.ok) return { ok: false, error: 'invalid_entry', detail: checked.detail };
  try {
    return await db.transaction((tx) => postIn(tx, entry));
  } catch (error) {
    if (error instanceof Refused) return error.result;
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
  await db.transaction(async (tx) => {
    for (const [index, entry] of entries.entries()) {
      if (!results[index]!.ok) continue;
      await tx.query('SAVEPOINT ledger_entry');
      try {
        results[index] = await postIn(tx, entry);
        await tx.query(
          results[index]!.ok ? 'RELEASE SAVEPOINT ledger_entry' : 'ROLLBACK TO SAVEPOINT ledger_entry',
        );
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        await tx.query('ROLLBACK TO SAVEPOINT ledger_entry');
        results[index] = error.result;
      }
    }
  });
  return results;
}

async function postIn(tx: Sql, entry: JournalEntry): Promise<PostResult> {
  const currencies = [...new Set(entry.legs.map((leg) => leg.currency))];
  const accounts = [...new Set(entry.legs.map((leg) => leg.accountId))];
  const known = await tx.query<{ c: number; a: number }>(
    `SELECT (SELECT count(*)::int FROM currencies WHERE code = ANY($1::text[])) AS c,
            (SELECT count(*)::int FROM accounts WHERE id = ANY($2::int[])) AS a`,
    [currencies, accounts],
  );
  if (known.rows[0]?.c !== currencies.length) {
    return { ok: false, error: 'unknown_currency', detail: `unknown currency in ${currencies.join(', ')}` };
  }
  if (known.rows[0]?.a !== accounts.length) {
    return { ok: false, error: 'unknown_account', detail: `unknown account in ${accounts.join(', ')}` };
  }
  const inserted = await tx.query<{ id: number }>(
    `INSERT INTO journal_entries (kind, reason, idempotency_key) VALUES ($1, $2, $3)
     ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
    [entry.kind, entry.reason, entry.idempotencyKey ?? null],
  );
  if (!inserted.rows[0]) {
    const existing = await tx.query<{ id: number }>(
      'SELECT id FROM journal_entries WHERE idempotency_key = $1',
      [entry.idempotencyKey],
    );
    return { ok: true, entryId: existing.rows[0]!.id, duplicate: true };
  }
  const entryId = inserted.rows[0].id;
  const values: unknown[] = [entryId];
  const tuples = entry.legs.map((leg) => {
    values.push(leg.accountId, leg.currency, leg.bucket, leg.amount.toString());
    const n = values.length;
    return `($1, $${n - 3}, $${n - 2}, $${n - 1}, $${n}::numeric)`;
  });
  await tx.query(
    `INSERT INTO journal_legs (entry_id, account_id, currency, bucket, amount) VALUES ${tuples.join(', ')}`,
    values,
  );
  const deltas = new Map<
    string,
    { accountId: number; currency: string; available: bigint; locked: bigint }
  >();
  for (const leg of entry.legs) {
    const key = `${String(leg.accountId).padStart(10, '0')}:${leg.currency}`;
    const delta = deltas.get(key) ?? {
      accountId: leg.accountId,
      currency: leg.currency,
      available: 0n,
      locked: 0n,
    };
    delta[leg.bucket] += leg.amount;
    deltas.set(key, delta);
  }
  for (const key of [...deltas.keys()].sort()) {
    const delta = deltas.get(key)!;
    if (delta.available === 0n && delta.locked === 0n) continue;
    await tx.query(
      `INSERT INTO balances (account_id, currency, may_go_negative)
       SELECT id, $2, may_go_negative FROM accounts WHERE id = $1
       ON CONFLICT (account_id, currency) DO NOTHING`,
      [delta.accountId, delta.currency],
    );
    // The guard is re-evaluated on the latest row version after waiting for its lock, so two
    // concurrent debits can never both pass on the same funds; the table CHECK is the backstop.
    const { rows } = await tx.query(
      `UPDATE balances SET available = available + $3::numeric, locked = locked + $4::numeric
        WHERE account_id = $1 AND currency = $2
          AND (may_go_negative OR (available + $3::numeric >= 0 AND locked + $4::numeric >= 0))
        RETURNING 1`,
      [delta.accountId, delta.currency, delta.available.toString(), delta.locked.toString()],
    );
    if (rows.length === 0) {
      throw new Refused({
        ok: false,
        error: 'insufficient_funds',
        detail: `account ${delta.accountId} has not enough ${delta.currency}`,
      });
    }
  }
  return { ok: true, entryId, duplicate: false };
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
