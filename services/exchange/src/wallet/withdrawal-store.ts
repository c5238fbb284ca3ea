/**
 * The `withdrawals` table (crypto and fiat rails) and its transitions. Every function that moves
 * money takes the caller's transaction (`Sql` inside `db.transaction`), locks the row, checks the
 * status it starts from and posts the ledger entry with the status change, so a transition happens
 * once whatever retries or concurrent callers do. See the README, "Wallet statuses".
 */
import { randomBytes } from 'node:crypto';
import { systemAccountId } from '../accounts/store.js';
import type { Sql } from '../db/database.js';
import { type WithdrawalFunds, withdrawalLock, withdrawalRelease, withdrawalSettle } from './entries.js';
import { postInTransaction } from './post.js';

export const WITHDRAWAL_STATUSES = [
  'awaiting_confirmation',
  'queued',
  'sending',
  'sent',
  'done',
  'canceled',
  'expired',
  'failed',
] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** Statuses whose funds are still locked. */
export const OPEN_STATUSES: readonly WithdrawalStatus[] = ['awaiting_confirmation', 'queued', 'sending'];

/** The spec's status of a withdrawal (details and the withdraw result); history maps further. */
export function publicWithdrawalStatus(
  status: WithdrawalStatus,
): 'awaiting_confirmation' | 'pending' | 'done' | 'canceled' {
  switch (status) {
    case 'awaiting_confirmation':
      return 'awaiting_confirmation';
    case 'queued':
    case 'sending':
    case 'sent':
      return 'pending';
    case 'done':
      return 'done';
    case 'canceled':
    case 'expired':
    case 'failed':
      return 'canceled';
  }
}

export interface Withdrawal extends WithdrawalFunds {
  readonly rail: 'crypto' | 'fiat';
  readonly provider: string | null;
  readonly destination: string;
  readonly memo: string | null;
  readonly detailsBox: string | null;
  readonly status: WithdrawalStatus;
  readonly tag: string;
  readonly externalId: string | null;
  readonly referenceId: string;
  readonly failure: string | null;
  readonly confirmExpiresAt: Date | null;
  readonly createdAt: Date;
  readonly sentAt: Date | null;
}

interface WithdrawalRow {
  id: number;
  account_id: number;
  currency: string;
  rail: 'crypto' | 'fiat';
  provider: string | null;
  destination: string;
  memo: string | null;
  details_box: string | null;
  amount: string;
  fee: string;
  fee_currency: string;
  total_amount: string;
  status: WithdrawalStatus;
  tag: string;
  external_id: string | null;
  reference_id: string;
  failure: string | null;
  confirm_expires_at: Date | null;
  created_at: Date;
  sent_at: Date | null;
}

const COLUMNS = `id, account_id, currency, rail, provider, destination, memo, details_box, amount::text AS amount,
  fee::text AS fee, fee_currency, total_amount::text AS total_amount, status, tag, external_id, reference_id,
  failure, confirm_expires_at, created_at, sent_at`;

function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return {
    id: row.id,
    accountId: row.account_id,
    currency: row.currency,
    rail: row.rail,
    provider: row.provider,
    destination: row.destination,
    memo: row.memo,
    detailsBox: row.details_box,
    amount: BigInt(row.amount),
    fee: BigInt(row.fee),
    feeCurrency: row.fee_currency,
    totalAmount: BigInt(row.total_amount),
    status: row.status,
    tag: row.tag,
    externalId: row.external_id,
    referenceId: row.reference_id,
    failure: row.failure,
    confirmExpiresAt: row.confirm_expires_at ? new Date(row.confirm_expires_at) : null,
    createdAt: new Date(row.created_at),
    sentAt: row.sent_at ? new Date(row.sent_at) : null,
  };
}

export interface NewWithdrawal {
  readonly accountId: number;
  readonly currency: string;
  readonly rail: 'crypto' | 'fiat';
  readonly provider?: string | null;
  readonly destination: string;
  readonly memo?: string | null;
  readonly detailsBox?: string | null;
  readonly amount: bigint;
  readonly fee: bigint;
  readonly feeCurrency: string;
  readonly totalAmount: bigint;
  /** 'awaiting_confirmation' (e-mail confirmation on) or 'queued'. */
  readonly status: 'awaiting_confirmation' | 'queued';
  readonly referenceId?: string;
  readonly confirmExpiresAt?: Date | null;
  /** The address book entry a restricted withdrawal is allowed by (src/withdraw-addresses/). */
  readonly withdrawAddressId?: number | null;
}

/**
 * Inserts a request and locks its funds in the caller's transaction. Throws FundsRefused (from
 * post.ts) when the balance does not cover it: the transaction must then roll back.
 */
export async function createWithdrawal(tx: Sql, input: NewWithdrawal): Promise<Withdrawal> {
  const tag = `wd-${randomBytes(10).toString('hex')}`;
  const { rows } = await tx.query<WithdrawalRow>(
    `INSERT INTO withdrawals (account_id, currency, rail, provider, destination, memo, details_box, amount, fee,
       fee_currency, total_amount, status, tag, reference_id, confirm_expires_at, withdraw_address_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING ${COLUMNS}`,
    [
      input.accountId,
      input.currency,
      input.rail,
      input.provider ?? null,
      input.destination,
      input.memo ?? null,
      input.detailsBox ?? null,
      input.amount.toString(),
      input.fee.toString(),
      input.feeCurrency,
      input.totalAmount.toString(),
      input.status,
      tag,
      input.referenceId ?? '',
      input.confirmExpiresAt ?? null,
      input.withdrawAddressId ?? null,
    ],
  );
  const withdrawal = toWithdrawal(rows[0]!);
  const built = withdrawalLock(withdrawal);
  if (!built.ok) throw new Error(`withdrawal ${withdrawal.id}: ${built.detail}`);
  await postInTransaction(tx, built.entry);
  return withdrawal;
}

/** A withdrawal of the account, or undefined (also when it belongs to another account). */
export async function findWithdrawal(
  db: Sql,
  accountId: number,
  id: number,
): Promise<Withdrawal | undefined> {
  const { rows } = await db.query<WithdrawalRow>(
    `SELECT ${COLUMNS} FROM withdrawals WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  return rows[0] ? toWithdrawal(rows[0]) : undefined;
}

export async function withdrawalById(db: Sql, id: number): Promise<Withdrawal | undefined> {
  const { rows } = await db.query<WithdrawalRow>(`SELECT ${COLUMNS} FROM withdrawals WHERE id = $1`, [id]);
  return rows[0] ? toWithdrawal(rows[0]) : undefined;
}

/** Withdrawals of a rail in the given statuses, oldest first. */
export async function withdrawalsIn(
  db: Sql,
  rail: 'crypto' | 'fiat',
  statuses: readonly WithdrawalStatus[],
  limit = 100,
): Promise<Withdrawal[]> {
  const { rows } = await db.query<WithdrawalRow>(
    `SELECT ${COLUMNS} FROM withdrawals WHERE rail = $1 AND status = ANY($2::text[]) ORDER BY id LIMIT $3`,
    [rail, [...statuses], limit],
  );
  return rows.map(toWithdrawal);
}

async function locked(tx: Sql, id: number): Promise<Withdrawal | undefined> {
  const { rows } = await tx.query<WithdrawalRow>(
    `SELECT ${COLUMNS} FROM withdrawals WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return rows[0] ? toWithdrawal(rows[0]) : undefined;
}

/**
 * Moves a request from one of `from` to `to` without moving money (confirm: awaiting_confirmation ->
 * queued; claim for sending: queued -> sending; done: sent -> done). Returns the row as it was, or
 * undefined when it was not in one of `from`.
 */
export async function transitionWithdrawal(
  tx: Sql,
  id: number,
  from: readonly WithdrawalStatus[],
  to: 'queued' | 'sending' | 'done',
): Promise<Withdrawal | undefined> {
  const current = await locked(tx, id);
  if (!current || !from.includes(current.status)) return undefined;
  await tx.query(
    `UPDATE withdrawals SET status = $2, updated_at = now(),
            finished_at = CASE WHEN $2 = 'done' THEN now() ELSE finished_at END WHERE id = $1`,
    [id, to],
  );
  return current;
}

/**
 * The send lease's stamp of a `sending` request: its `updated_at` in microseconds (the column's own
 * precision, so the stamp compares exactly). Whoever last stamped the row holds the send.
 */
const STAMP = `(extract(epoch from updated_at) * 1000000)::bigint::text`;

/** The stamp of the lease just taken in `tx` (read in the claim's transaction, so it is the claim's). */
export async function sendStamp(tx: Sql, id: number): Promise<string | undefined> {
  const { rows } = await tx.query<{ stamp: string }>(
    `SELECT ${STAMP} AS stamp FROM withdrawals WHERE id = $1 AND status = 'sending'`,
    [id],
  );
  return rows[0]?.stamp;
}

/**
 * Takes up a `sending` request untouched for `leaseMs` (its sender died or stalled); returns the new
 * stamp, or undefined when another process holds it or it is no longer `sending`.
 */
export async function takeStaleSend(db: Sql, id: number, leaseMs: number): Promise<string | undefined> {
  const { rows } = await db.query<{ stamp: string }>(
    `UPDATE withdrawals SET updated_at = clock_timestamp() WHERE id = $1 AND status = 'sending'
        AND updated_at < now() - make_interval(secs => $2::double precision / 1000) RETURNING ${STAMP} AS stamp`,
    [id, leaseMs],
  );
  return rows[0]?.stamp;
}

/**
 * Right before the custody is called: renews the send lease only if it still carries `stamp`, i.e. no
 * other process took the request up meanwhile (this one stalled past the lease: SIGSTOP, a long GC, a
 * cut network). Returns the new stamp, or undefined when the send is no longer this process's.
 */
export async function renewSend(db: Sql, id: number, stamp: string): Promise<string | undefined> {
  const { rows } = await db.query<{ stamp: string }>(
    `UPDATE withdrawals SET updated_at = clock_timestamp() WHERE id = $1 AND status = 'sending'
        AND ${STAMP} = $2 RETURNING ${STAMP} AS stamp`,
    [id, stamp],
  );
  return rows[0]?.stamp;
}

/**
 * Gives the locked funds back and ends the request as canceled, expired or failed; only from a
 * status whose funds are locked (`from`, by default every such status). Returns false when the
 * request was not in one of them (already sent, or already ended).
 */
export async function releaseWithdrawal(
  tx: Sql,
  id: number,
  to: 'canceled' | 'expired' | 'failed',
  failure: string | null = null,
  from: readonly WithdrawalStatus[] = OPEN_STATUSES,
): Promise<boolean> {
  const current = await locked(tx, id);
  if (!current || !from.includes(current.status) || !OPEN_STATUSES.includes(current.status)) return false;
  const built = withdrawalRelease(current, to);
  if (!built.ok) throw new Error(`withdrawal ${id}: ${built.detail}`);
  await postInTransaction(tx, built.entry);
  await tx.query(
    `UPDATE withdrawals SET status = $2, failure = $3, updated_at = now(), finished_at = now() WHERE id = $1`,
    [id, to, failure],
  );
  return true;
}

/**
 * The transfer left (a txid or a gateway payout id is known): the locked funds go to the external
 * account and the fee to the fee account, and the request becomes `sent` (`done` with
 * `finished`). Allowed from queued or sending. Returns false when it was not in one of them.
 */
export async function settleWithdrawal(
  tx: Sql,
  id: number,
  externalId: string,
  finished = false,
): Promise<boolean> {
  const current = await locked(tx, id);
  if (!current || (current.status !== 'queued' && current.status !== 'sending')) return false;
  const external = await systemAccountId(tx, 'external');
  const fees = await systemAccountId(tx, 'fees');
  const built = withdrawalSettle(current, external, fees);
  if (!built.ok) throw new Error(`withdrawal ${id}: ${built.detail}`);
  await postInTransaction(tx, built.entry);
  await tx.query(
    `UPDATE withdrawals SET status = $2, external_id = $3, sent_at = now(), updated_at = now(),
            finished_at = CASE WHEN $2 = 'done' THEN now() ELSE NULL END WHERE id = $1`,
    [id, finished ? 'done' : 'sent', externalId],
  );
  return true;
}

/** Records when an unconfirmed request expires: its mailed links' expiry (see confirmation-mail.ts). */
export async function setConfirmExpiry(tx: Sql, id: number, expiresAt: Date): Promise<void> {
  await tx.query('UPDATE withdrawals SET confirm_expires_at = $2 WHERE id = $1', [id, expiresAt]);
}
