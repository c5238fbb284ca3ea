import type { Sql } from '@platform/sql-storage/database';
import type { RefundStatus } from './machine.js';

/** A refund as stored, with the reference of the invoice it pays back. */
export interface Refund {
  readonly id: string;
  readonly merchantId: string;
  readonly referenceId: string;
  readonly invoiceId: string;
  readonly invoiceReferenceId: string;
  readonly service: string;
  readonly currency: string;
  readonly amount: string;
  readonly settleAt: Date;
  readonly status: RefundStatus;
  readonly failureReason: string | null;
  readonly testMode: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface Row {
  id: string;
  merchant_id: string;
  reference_id: string;
  invoice_id: string;
  invoice_reference_id: string;
  service: string;
  currency: string;
  amount: string;
  settle_at: Date | string;
  status: RefundStatus;
  failure_reason: string | null;
  test_mode: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

const SELECT = `SELECT r.id, r.merchant_id, r.reference_id, r.invoice_id, i.reference_id AS invoice_reference_id,
  i.service, r.currency, r.amount::text AS amount, r.settle_at, r.status, r.failure_reason, r.test_mode,
  r.created_at, r.updated_at
  FROM refunds r JOIN invoices i ON i.id = r.invoice_id`;

function fromRow(row: Row): Refund {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    referenceId: row.reference_id,
    invoiceId: row.invoice_id,
    invoiceReferenceId: row.invoice_reference_id,
    service: row.service,
    currency: row.currency,
    amount: row.amount,
    settleAt: new Date(row.settle_at),
    status: row.status,
    failureReason: row.failure_reason,
    testMode: row.test_mode,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export interface NewRefund {
  readonly id: string;
  readonly merchantId: string;
  readonly referenceId: string;
  readonly invoiceId: string;
  readonly currency: string;
  readonly amount: string;
  readonly settleAt: Date;
  readonly testMode: boolean;
  readonly createdAt: Date;
}

/** Inserts the refund unless its (merchant, reference) exists; returns whether it did. */
export async function insertRefund(tx: Sql, refund: NewRefund): Promise<boolean> {
  const { rows } = await tx.query(
    `INSERT INTO refunds (id, merchant_id, reference_id, invoice_id, currency, amount, settle_at, status,
       test_mode, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'processing', $8, $9, $9)
     ON CONFLICT (merchant_id, reference_id) DO NOTHING RETURNING id`,
    [
      refund.id,
      refund.merchantId,
      refund.referenceId,
      refund.invoiceId,
      refund.currency,
      refund.amount,
      refund.settleAt.toISOString(),
      refund.testMode,
      refund.createdAt.toISOString(),
    ],
  );
  return rows.length > 0;
}

export async function findRefund(sql: Sql, id: string, lock = false): Promise<Refund | undefined> {
  const { rows } = await sql.query<Row>(`${SELECT} WHERE r.id = $1${lock ? ' FOR UPDATE OF r' : ''}`, [id]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function findRefundByReference(
  sql: Sql,
  merchantId: string,
  referenceId: string,
): Promise<Refund | undefined> {
  const { rows } = await sql.query<Row>(`${SELECT} WHERE r.merchant_id = $1 AND r.reference_id = $2`, [
    merchantId,
    referenceId,
  ]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** The sum of the invoice's refunds that hold their amount (processing or success), as decimal text. */
export async function refundedAmount(sql: Sql, invoiceId: string): Promise<string> {
  const { rows } = await sql.query<{ total: string }>(
    `SELECT coalesce(sum(amount), 0)::numeric(20, 2)::text AS total FROM refunds
     WHERE invoice_id = $1 AND status IN ('processing', 'success')`,
    [invoiceId],
  );
  return rows[0]?.total ?? '0.00';
}

export async function dueRefundIds(sql: Sql, now: Date, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM refunds WHERE status = 'processing' AND settle_at <= $1 ORDER BY settle_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows.map((row) => row.id);
}

export async function settleRefund(
  tx: Sql,
  id: string,
  status: 'success' | 'failed',
  failureReason: string | null,
  at: Date,
): Promise<void> {
  await tx.query('UPDATE refunds SET status = $2, failure_reason = $3, updated_at = $4 WHERE id = $1', [
    id,
    status,
    failureReason,
    at.toISOString(),
  ]);
}
