import type { Sql } from '../db/database.js';

export interface ReconciliationReport {
  readonly ok: boolean;
  readonly entries: number;
  readonly legs: number;
  readonly balances: number;
  /** Human-readable violations, at most 100. */
  readonly problems: string[];
}

/**
 * Proves the ledger invariants over the whole database:
 * 1. every entry has two legs or more and its legs sum to zero per currency (hence all legs of a
 *    currency sum to zero);
 * 2. every balance row equals the sum of its legs, bucket by bucket, and no legs lack a balance row;
 * 3. no balance of an account that may not go negative is below zero;
 * 4. every leg belongs to an entry and every order to an account (these tables carry no foreign keys
 *    on the order writer's hot path, see 006_hot_path_foreign_keys.sql; a leg's account and currency
 *    are covered by 2, since balance rows keep theirs).
 */
export async function reconcile(db: Sql): Promise<ReconciliationReport> {
  const problems: string[] = [];
  const unbalanced = await db.query<{ entry_id: number; currency: string; total: string }>(
    `SELECT entry_id, currency, sum(amount)::text AS total FROM journal_legs
      GROUP BY entry_id, currency HAVING sum(amount) <> 0 ORDER BY entry_id LIMIT 100`,
  );
  for (const row of unbalanced.rows) {
    problems.push(`entry ${row.entry_id}: ${row.currency} legs sum to ${row.total}, not 0`);
  }
  const short = await db.query<{ id: number; legs: number }>(
    `SELECT e.id, count(l.id)::int AS legs FROM journal_entries e LEFT JOIN journal_legs l ON l.entry_id = e.id
      GROUP BY e.id HAVING count(l.id) < 2 ORDER BY e.id LIMIT 100`,
  );
  for (const row of short.rows) problems.push(`entry ${row.id}: has ${row.legs} leg(s)`);
  const mismatched = await db.query<{
    account_id: number;
    currency: string;
    available: string | null;
    locked: string | null;
    legs_available: string;
    legs_locked: string;
  }>(
    `WITH sums AS (
       SELECT account_id, currency,
              coalesce(sum(amount) FILTER (WHERE bucket = 'available'), 0) AS legs_available,
              coalesce(sum(amount) FILTER (WHERE bucket = 'locked'), 0) AS legs_locked
         FROM journal_legs GROUP BY account_id, currency)
     SELECT coalesce(b.account_id, s.account_id) AS account_id, coalesce(b.currency, s.currency) AS currency,
            b.available::text, b.locked::text,
            coalesce(s.legs_available, 0)::text AS legs_available, coalesce(s.legs_locked, 0)::text AS legs_locked
       FROM balances b FULL OUTER JOIN sums s ON s.account_id = b.account_id AND s.currency = b.currency
      WHERE b.account_id IS NULL
         OR b.available <> coalesce(s.legs_available, 0) OR b.locked <> coalesce(s.legs_locked, 0)
      ORDER BY 1, 2 LIMIT 100`,
  );
  for (const row of mismatched.rows) {
    problems.push(
      `account ${row.account_id} ${row.currency}: balance ${row.available ?? 'missing'}/${row.locked ?? 'missing'} ` +
        `but legs sum to ${row.legs_available}/${row.legs_locked} (available/locked)`,
    );
  }
  const negative = await db.query<{ account_id: number; currency: string }>(
    `SELECT b.account_id, b.currency FROM balances b JOIN accounts a ON a.id = b.account_id
      WHERE NOT a.may_go_negative AND (b.available < 0 OR b.locked < 0) ORDER BY 1, 2 LIMIT 100`,
  );
  for (const row of negative.rows)
    problems.push(`account ${row.account_id} ${row.currency}: negative balance`);
  const orphans = await db.query<{ what: string; id: number }>(
    `(SELECT 'leg' AS what, l.id FROM journal_legs l
       WHERE NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.id = l.entry_id) ORDER BY l.id LIMIT 100)
     UNION ALL
     (SELECT 'order', o.id FROM orders o
       WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = o.account_id) ORDER BY o.id LIMIT 100)`,
  );
  for (const row of orphans.rows) {
    problems.push(
      row.what === 'leg'
        ? `leg ${row.id}: its entry does not exist`
        : `order ${row.id}: its account does not exist`,
    );
  }
  const counts = await db.query<{ entries: number; legs: number; balances: number }>(
    `SELECT (SELECT count(*)::int FROM journal_entries) AS entries, (SELECT count(*)::int FROM journal_legs) AS legs,
            (SELECT count(*)::int FROM balances) AS balances`,
  );
  const total = counts.rows[0] ?? { entries: 0, legs: 0, balances: 0 };
  return { ok: problems.length === 0, ...total, problems: problems.slice(0, 100) };
}
