import type { Sql } from '@platform/sql-storage/database';
import type { PayoutStatus } from '../domain/payout.js';

/** A payout as stored. The destination is kept masked only, with the processor's token. */
export interface Payout {
  readonly id: string;
  readonly merchantId: string;
  readonly referenceId: string;
  readonly service: string;
  readonly currency: string;
  readonly amount: string;
  readonly fee: string;
  readonly destinationMasked: string;
  readonly processorToken: string;
  readonly pendingOutcome: 'success' | 'failed';
  readonly pendingReason: string | null;
  readonly settleAt: Date;
  readonly status: PayoutStatus;
  readonly failureReason: string | null;
  readonly testMode: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface Row {
  id: string;
  merchant_id: string;
  reference_id: string;
  service: string;
  currency: string;
  amount: string;
  fee: string;
  destination_masked: string;
  processor_token: string;
  pending_outcome: 'success' | 'failed';
  pending_reason: string | null;
  settle_at: Date | string;
  status: PayoutStatus;
  failure_reason: string | null;
  test_mode: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = `id, merchant_id, reference_id, service, currency, amount::text AS amount, fee::text AS fee,
  destination_masked, processor_token, pending_outcome, pending_reason, settle_at, status, failure_reason,
  test_mode, created_at, updated_at`;

function fromRow(row: Row): Payout {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    referenceId: row.reference_id,
    service: row.service,
    currency: row.currency,
    amount: row.amount,
    fee: row.fee,
    destinationMasked: row.destination_masked,
    processorToken: row.processor_token,
    pendingOutcome: row.pending_outcome,
    pendingReason: row.pending_reason,
    settleAt: new Date(row.settle_at),
    status: row.status,
    failureReason: row.failure_reason,
    testMode: row.test_mode,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export type NewPayout = Omit<Payout, 'status' | 'failureReason' | 'updatedAt'>;

/** Inserts the payout unless one with its (merchant, reference) exists; returns it or undefined. */
export async function insertPayout(tx: Sql, payout: NewPayout): Promise<Payout | undefined> {
  const { rows } = await tx.query<Row>(
    `INSERT INTO payouts (id, merchant_id, reference_id, service, currency, amount, fee, destination_masked,
       processor_token, pending_outcome, pending_reason, settle_at, status, test_mode, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'processing', $13, $14, $14)
     ON CONFLICT (merchant_id, reference_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      payout.id,
      payout.merchantId,
      payout.referenceId,
      payout.service,
      payout.currency,
      payout.amount,
      payout.fee,
      payout.destinationMasked,
      payout.processorToken,
      payout.pendingOutcome,
      payout.pendingReason,
      payout.settleAt.toISOString(),
      payout.testMode,
      payout.createdAt.toISOString(),
    ],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function findPayout(sql: Sql, id: string, lock = false): Promise<Payout | undefined> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM payouts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function findPayoutByReference(
  sql: Sql,
  merchantId: string,
  referenceId: string,
): Promise<Payout | undefined> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM payouts WHERE merchant_id = $1 AND reference_id = $2`,
    [merchantId, referenceId],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Ids of payouts the processor is due to settle. */
export async function duePayoutIds(sql: Sql, now: Date, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM payouts WHERE status = 'processing' AND settle_at <= $1 ORDER BY settle_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows.map((row) => row.id);
}

export async function settlePayout(
  tx: Sql,
  id: string,
  status: 'success' | 'failed',
  failureReason: string | null,
  at: Date,
): Promise<Payout> {
  const { rows } = await tx.query<Row>(
    `UPDATE payouts SET status = $2, failure_reason = $3, updated_at = $4 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, status, failureReason, at.toISOString()],
  );
  const row = rows[0];
  if (!row) throw new Error(`payout ${id} vanished`);
  return fromRow(row);
}
