/**
 * The `deposits` table (crypto and fiat). Crediting is exactly once: the row moves from `pending` to
 * `credited` under a row lock in the transaction that posts the credit, and the credit carries an
 * idempotency key; a crypto deposit is one row per (currency, txid, output).
 */
import { randomInt } from 'node:crypto';
import { systemAccountId } from '../accounts/store.js';
import type { Database, Sql } from '../db/database.js';
import { depositCredit } from './entries.js';
import { postInTransaction } from './post.js';

export type DepositStatus = 'pending' | 'credited' | 'below_minimum' | 'orphaned' | 'canceled';

/** The spec's deposit/history status of an internal one. */
export function publicDepositStatus(status: DepositStatus): 'pending' | 'done' | 'canceled' {
  if (status === 'credited') return 'done';
  if (status === 'pending') return 'pending';
  return 'canceled';
}

export interface Deposit {
  readonly id: number;
  readonly accountId: number;
  readonly currency: string;
  /** Ledger minor units. */
  readonly amount: bigint;
  readonly status: DepositStatus;
  readonly provider: string | null;
  readonly address: string | null;
  readonly memo: string | null;
  readonly txid: string | null;
  readonly outputIndex: number | null;
  readonly confirmations: number | null;
  readonly externalId: string | null;
  readonly referenceId: string | null;
  readonly createdAt: Date;
  readonly creditedAt: Date | null;
}

interface DepositRow {
  id: number;
  account_id: number;
  currency: string;
  amount: string;
  status: DepositStatus;
  provider: string | null;
  address: string | null;
  memo: string | null;
  txid: string | null;
  output_index: number | null;
  confirmations: number | null;
  external_id: string | null;
  reference_id: string | null;
  created_at: Date;
  credited_at: Date | null;
}

const COLUMNS = `id, account_id, currency, amount::text AS amount, status, provider, address, memo, txid,
  output_index, confirmations, external_id, reference_id, created_at, credited_at`;

function toDeposit(row: DepositRow): Deposit {
  return {
    id: row.id,
    accountId: row.account_id,
    currency: row.currency,
    amount: BigInt(row.amount),
    status: row.status,
    provider: row.provider,
    address: row.address,
    memo: row.memo,
    txid: row.txid,
    outputIndex: row.output_index,
    confirmations: row.confirmations,
    externalId: row.external_id,
    referenceId: row.reference_id,
    createdAt: new Date(row.created_at),
    creditedAt: row.credited_at ? new Date(row.credited_at) : null,
  };
}

/** A deposit of the account, or undefined (also when it belongs to another account). */
export async function findDeposit(db: Sql, accountId: number, id: number): Promise<Deposit | undefined> {
  const { rows } = await db.query<DepositRow>(
    `SELECT ${COLUMNS} FROM deposits WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  return rows[0] ? toDeposit(rows[0]) : undefined;
}

export async function depositById(db: Sql, id: number): Promise<Deposit | undefined> {
  const { rows } = await db.query<DepositRow>(`SELECT ${COLUMNS} FROM deposits WHERE id = $1`, [id]);
  return rows[0] ? toDeposit(rows[0]) : undefined;
}

export interface NewPendingDeposit {
  readonly accountId: number;
  readonly currency: string;
  readonly amount: bigint;
  /** Fiat service code. */
  readonly provider: string;
  readonly referenceId?: string;
  readonly externalId?: string;
}

/**
 * Fiat deposit ids, the spec's `deposit_id` and the reference of the gateway's invoice: random in
 * 2^30..2^31-1 (positive int32), so nobody can guess the next one (the gateway creates an invoice
 * for an unsigned reference it has not seen, services/paygate README "Unsigned invoices"). Crypto
 * deposits keep the table's sequence, which migration 070 stops below this range, so the two never
 * meet; uniqueness is the primary key's.
 */
export const FIAT_DEPOSIT_IDS = { min: 2 ** 30, max: 2 ** 31 - 1 } as const;

/** A uniformly random fiat deposit id (a cryptographic source: ids must not be predictable). */
export function randomFiatDepositId(): number {
  return randomInt(FIAT_DEPOSIT_IDS.min, FIAT_DEPOSIT_IDS.max + 1);
}

/** Picks per deposit before giving up; with a billion ids, a second pick is already rare. */
const ID_PICKS = 16;

/**
 * A fiat deposit waiting for its payment (credit it later with `creditDeposit`), under a random id:
 * an id taken already (by a committed or a concurrent deposit) inserts nothing and another is
 * picked. `pickId` is for tests.
 */
export async function createPendingDeposit(
  tx: Sql,
  input: NewPendingDeposit,
  pickId: () => number = randomFiatDepositId,
): Promise<Deposit> {
  for (let pick = 0; pick < ID_PICKS; pick += 1) {
    const { rows } = await tx.query<DepositRow>(
      `INSERT INTO deposits (id, account_id, currency, amount, status, provider, reference_id, external_id)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7)
       ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        pickId(),
        input.accountId,
        input.currency,
        input.amount.toString(),
        input.provider,
        input.referenceId ?? null,
        input.externalId ?? null,
      ],
    );
    if (rows[0]) return toDeposit(rows[0]);
  }
  throw new Error(`no free deposit id in ${ID_PICKS} random picks`);
}

export interface SeenTransfer {
  readonly accountId: number;
  readonly currency: string;
  readonly amount: bigint;
  readonly address: string;
  readonly memo: string | null;
  readonly txid: string;
  readonly outputIndex: number;
  readonly confirmations: number;
  /** Below the currency's min_deposit: recorded and shown, never credited. */
  readonly belowMinimum: boolean;
}

/**
 * Records an incoming output once per (currency, txid, output); seen again, only its confirmations
 * change (and an orphaned one that came back is pending again). Returns the row.
 */
export async function recordSeenTransfer(db: Sql, seen: SeenTransfer): Promise<Deposit> {
  const { rows } = await db.query<DepositRow>(
    `INSERT INTO deposits (account_id, currency, amount, status, address, memo, txid, output_index, confirmations)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (currency, txid, output_index) DO UPDATE
        SET confirmations = excluded.confirmations, updated_at = now(),
            status = CASE WHEN deposits.status = 'orphaned' AND excluded.confirmations >= 0 THEN 'pending'
                          ELSE deposits.status END
     RETURNING ${COLUMNS}`,
    [
      seen.accountId,
      seen.currency,
      seen.amount.toString(),
      seen.belowMinimum ? 'below_minimum' : 'pending',
      seen.address,
      seen.memo,
      seen.txid,
      seen.outputIndex,
      seen.confirmations,
    ],
  );
  return toDeposit(rows[0]!);
}

/** Pending crypto deposits of one currency (what the scanner re-checks every round). */
export async function pendingCryptoDeposits(db: Sql, currency: string): Promise<Deposit[]> {
  const { rows } = await db.query<DepositRow>(
    `SELECT ${COLUMNS} FROM deposits WHERE currency = $1 AND status = 'pending' AND provider IS NULL ORDER BY id`,
    [currency],
  );
  return rows.map(toDeposit);
}

/** Updates the confirmations of a pending deposit, or marks it orphaned (it left the chain). */
export async function updateConfirmations(
  db: Sql,
  id: number,
  confirmations: number | 'gone',
): Promise<void> {
  if (confirmations === 'gone') {
    await db.query(
      `UPDATE deposits SET status = 'orphaned', updated_at = now() WHERE id = $1 AND status = 'pending'`,
      [id],
    );
    return;
  }
  await db.query(
    `UPDATE deposits SET confirmations = $2, updated_at = now() WHERE id = $1 AND status = 'pending'`,
    [id, confirmations],
  );
}

export type CreditOutcome = 'credited' | 'already_credited' | 'not_pending' | 'unknown';

/**
 * Credits a pending deposit exactly once, inside the caller's transaction (a fiat callback can record
 * its own acknowledgement in the same one): row lock, credit entry (idempotency key, by default
 * `deposit-credit:<id>`) and the status change commit together. A second call, concurrent or later,
 * answers `already_credited` and moves nothing.
 */
export async function creditDepositIn(tx: Sql, id: number, idempotencyKey?: string): Promise<CreditOutcome> {
  const { rows } = await tx.query<DepositRow>(`SELECT ${COLUMNS} FROM deposits WHERE id = $1 FOR UPDATE`, [
    id,
  ]);
  const row = rows[0];
  if (!row) return 'unknown';
  if (row.status === 'credited') return 'already_credited';
  if (row.status !== 'pending') return 'not_pending';
  const deposit = toDeposit(row);
  const external = await systemAccountId(tx, 'external');
  const built = depositCredit(
    id,
    deposit.accountId,
    external,
    deposit.currency,
    deposit.amount,
    idempotencyKey,
  );
  if (!built.ok) throw new Error(`deposit ${id}: ${built.detail}`);
  const entryId = await postInTransaction(tx, built.entry);
  await tx.query(
    `UPDATE deposits SET status = 'credited', credited_at = now(), updated_at = now(), credited_entry_id = $2
      WHERE id = $1`,
    [id, entryId],
  );
  return entryId === null ? 'already_credited' : 'credited';
}

/** `creditDepositIn` in a transaction of its own. */
export function creditDeposit(db: Database, id: number, idempotencyKey?: string): Promise<CreditOutcome> {
  return db.transaction((tx) => creditDepositIn(tx, id, idempotencyKey));
}

/** Gives up a pending deposit (fiat: the payment failed or expired). */
export async function cancelDeposit(db: Sql, id: number): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE deposits SET status = 'canceled', updated_at = now() WHERE id = $1 AND status = 'pending' RETURNING id`,
    [id],
  );
  return rows.length > 0;
}
