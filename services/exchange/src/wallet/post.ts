import { type Sql, sqlState } from '../db/database.js';
import type { JournalEntry } from '../ledger/entry.js';
import { postingApplied, postingCtes, postingParameters } from '../ledger/store.js';

/** One statement posting an entry (the ledger's own, see POST_SQL in src/ledger/store.ts). */
const POST_IN_TX_SQL = `WITH ${postingCtes(1)}
SELECT (SELECT id FROM e) AS entry_id,
       CASE WHEN ${postingApplied(1)} THEN 0 ELSE ledger_refuse('insufficient_funds') END AS refused`;

/** A posting refused by the ledger for lack of funds; thrown so the surrounding transaction rolls back. */
export class FundsRefused extends Error {
  constructor() {
    super('a balance would go below zero');
    this.name = 'FundsRefused';
  }
}

/**
 * Posts `entry` inside the caller's transaction, so that it commits together with the wallet row it
 * belongs to (a withdrawal and its lock, a deposit's status and its credit). Returns the entry id,
 * or null when its idempotency key was posted before (then nothing moved). A refusal throws
 * FundsRefused: the transaction is aborted by then and must roll back.
 */
export async function postInTransaction(tx: Sql, entry: JournalEntry): Promise<number | null> {
  try {
    const { rows } = await tx.query<{ entry_id: number | null }>(POST_IN_TX_SQL, postingParameters(entry));
    return rows[0]?.entry_id ?? null;
  } catch (error) {
    const code = sqlState(error);
    const constraint = (error as { constraint?: string }).constraint;
    if (code === 'SVC01' || (code === '23514' && constraint === 'balances_check')) throw new FundsRefused();
    throw error;
  }
}
