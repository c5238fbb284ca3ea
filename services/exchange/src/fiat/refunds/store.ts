import { systemAccountId } from '../../accounts/store.js';
import type { Sql } from '../../db/database.js';
import { postInTransaction } from '../../wallet/post.js';
import { refundLock, refundRelease, refundSettle } from './entries.js';

export type RefundStatus = 'sending' | 'done' | 'failed';

export interface FiatRefund {
  readonly id: number;
  readonly depositId: number;
  readonly accountId: number;
  readonly currency: string;
  readonly amount: bigint;
  readonly status: RefundStatus;
  readonly gatewayId: string | null;
  readonly failure: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface Row {
  id: number;
  deposit_id: number;
  account_id: number;
  currency: string;
  amount: string;
  status: RefundStatus;
  gateway_id: string | null;
  failure: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, deposit_id, account_id, currency, amount::text AS amount, status, gateway_id, failure, created_at, updated_at';

function toRefund(row: Row): FiatRefund {
  return {
    id: row.id,
    depositId: row.deposit_id,
    accountId: row.account_id,
    currency: row.currency,
    amount: BigInt(row.amount),
    status: row.status,
    gatewayId: row.gateway_id,
    failure: row.failure,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export async function refundById(db: Sql, id: number, lock = false): Promise<FiatRefund | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM fiat_refunds WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? toRefund(rows[0]) : undefined;
}

export async function refundOfDeposit(db: Sql, depositId: number): Promise<FiatRefund | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM fiat_refunds WHERE deposit_id = $1`, [
    depositId,
  ]);
  return rows[0] ? toRefund(rows[0]) : undefined;
}

export async function listRefunds(db: Sql, limit = 100): Promise<FiatRefund[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM fiat_refunds ORDER BY id DESC LIMIT $1`, [
    limit,
  ]);
  return rows.map(toRefund);
}

/**
 * Records the refund and locks its amount in the caller's transaction. Throws FundsRefused (post.ts)
 * when the owner's available balance no longer covers it: the transaction must then roll back.
 */
export async function createRefund(
  tx: Sql,
  input: { depositId: number; accountId: number; currency: string; amount: bigint },
): Promise<FiatRefund> {
  const { rows } = await tx.query<Row>(
    `INSERT INTO fiat_refunds (deposit_id, account_id, currency, amount, status)
     VALUES ($1, $2, $3, $4, 'sending') RETURNING ${COLUMNS}`,
    [input.depositId, input.accountId, input.currency, input.amount.toString()],
  );
  const refund = toRefund(rows[0]!);
  const built = refundLock(refund);
  if (!built.ok) throw new Error(`refund ${refund.id}: ${built.detail}`);
  await postInTransaction(tx, built.entry);
  return refund;
}

/**
 * Applies the gateway's state of a refund (its answer or a callback) on the locked row: `success`
 * settles the locked funds, `failed` gives them back, anything else records the gateway's id.
 * `conflict`: the refund already ended the other way, which needs an operator; nothing moves.
 */
export async function applyRefundState(
  tx: Sql,
  id: number,
  state: { id: string | number; status: string; failure_reason?: string | null },
): Promise<'settled' | 'released' | 'recorded' | 'conflict' | 'unknown'> {
  const refund = await refundById(tx, id, true);
  if (!refund) return 'unknown';
  const end = async (status: 'done' | 'failed', failure: string | null) =>
    tx.query(
      'UPDATE fiat_refunds SET status = $2, failure = $3, gateway_id = $4, updated_at = now() WHERE id = $1',
      [id, status, failure, String(state.id)],
    );
  switch (state.status) {
    case 'success': {
      if (refund.status === 'done') return 'settled';
      if (refund.status === 'failed') return 'conflict';
      const built = refundSettle(refund, await systemAccountId(tx, 'external'));
      if (!built.ok) throw new Error(`refund ${id}: ${built.detail}`);
      await postInTransaction(tx, built.entry);
      await end('done', null);
      return 'settled';
    }
    case 'failed':
      return releaseRefund(tx, refund, state.failure_reason ?? 'the refund failed', String(state.id));
    default:
      await tx.query(
        `UPDATE fiat_refunds SET gateway_id = $2, updated_at = now() WHERE id = $1 AND status = 'sending'`,
        [id, String(state.id)],
      );
      return 'recorded';
  }
}

/** Gives the locked amount back (the refund failed or the gateway refused it). */
export async function releaseRefund(
  tx: Sql,
  refund: FiatRefund,
  failure: string,
  gatewayId: string | null = null,
): Promise<'released' | 'conflict'> {
  if (refund.status === 'failed') return 'released';
  if (refund.status === 'done') return 'conflict';
  const built = refundRelease(refund);
  if (!built.ok) throw new Error(`refund ${refund.id}: ${built.detail}`);
  await postInTransaction(tx, built.entry);
  await tx.query(
    `UPDATE fiat_refunds SET status = 'failed', failure = $2, gateway_id = coalesce($3, gateway_id),
       updated_at = now() WHERE id = $1`,
    [refund.id, failure, gatewayId],
  );
  return 'released';
}

export interface UnsolicitedRefund {
  readonly gateway_id: string;
  readonly event_id: string;
  readonly reference_id: string;
  readonly invoice_reference_id: string | null;
  readonly status: string;
  readonly currency: string;
  readonly amount: string;
  readonly received_at: Date;
}

export async function recordUnsolicited(
  db: Sql,
  event: {
    id: string | number;
    event_id: string;
    reference_id: string;
    invoice_reference_id?: string | undefined;
    status: string;
    currency: string;
    amount: string | number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO paygate_unsolicited_refunds (gateway_id, event_id, reference_id, invoice_reference_id, status,
       currency, amount, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb) ON CONFLICT DO NOTHING`,
    [
      String(event.id),
      event.event_id,
      event.reference_id,
      event.invoice_reference_id ?? null,
      event.status,
      event.currency,
      String(event.amount),
      JSON.stringify(event),
    ],
  );
}

export async function listUnsolicited(db: Sql, limit = 100): Promise<UnsolicitedRefund[]> {
  const { rows } = await db.query<UnsolicitedRefund>(
    `SELECT gateway_id, event_id, reference_id, invoice_reference_id, status, currency, amount, received_at
     FROM paygate_unsolicited_refunds ORDER BY received_at DESC LIMIT $1`,
    [limit],
  );
  return rows;
}
