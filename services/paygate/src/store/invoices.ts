import type { Sql } from '@platform/sql-storage/database';
import type { InvoiceStatus } from '../domain/invoice.js';

/** An invoice as stored. Amounts are decimal strings with the currency's decimals. */
export interface Invoice {
  readonly id: string;
  readonly merchantId: string;
  readonly referenceId: string;
  readonly service: string;
  readonly currency: string;
  readonly amount: string;
  readonly fee: string;
  readonly total: string;
  readonly description: string;
  readonly serviceFields: Readonly<Record<string, string>>;
  readonly status: InvoiceStatus;
  readonly cardMasked: string | null;
  readonly processorToken: string | null;
  readonly failureReason: string | null;
  readonly testMode: boolean;
  /** Cards tried that did not pay (src/domain/card-attempts.ts). */
  readonly cardAttempts: number;
  /** Why the last card tried did not pay, while the invoice stays open for another; null otherwise. */
  readonly lastAttemptFailure: string | null;
  /** The page language the merchant chose (`uk`, `ru`, `en`); null: the browser's. */
  readonly locale: string | null;
  /** The last card that did not pay, for the merchant (kept after another card pays); null: none. */
  readonly lastDecline: { readonly reason: string; readonly at: Date } | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly expiresAt: Date;
}

interface Row {
  id: string;
  merchant_id: string;
  reference_id: string;
  service: string;
  currency: string;
  amount: string;
  fee: string;
  total: string;
  description: string;
  service_fields: Record<string, string> | string;
  status: InvoiceStatus;
  card_masked: string | null;
  processor_token: string | null;
  failure_reason: string | null;
  test_mode: boolean;
  card_attempts: number;
  last_attempt_failure: string | null;
  locale: string | null;
  last_decline_reason: string | null;
  last_decline_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  expires_at: Date | string;
}

const COLUMNS = `id, merchant_id, reference_id, service, currency, amount::text AS amount, fee::text AS fee,
  total::text AS total, description, service_fields, status, card_masked, processor_token, failure_reason,
  test_mode, card_attempts, last_attempt_failure, locale, last_decline_reason, last_decline_at, created_at,
  updated_at, expires_at`;

function fromRow(row: Row): Invoice {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    referenceId: row.reference_id,
    service: row.service,
    currency: row.currency,
    amount: row.amount,
    fee: row.fee,
    total: row.total,
    description: row.description,
    serviceFields:
      typeof row.service_fields === 'string'
        ? (JSON.parse(row.service_fields) as Record<string, string>)
        : row.service_fields,
    status: row.status,
    cardMasked: row.card_masked,
    processorToken: row.processor_token,
    failureReason: row.failure_reason,
    testMode: row.test_mode,
    cardAttempts: row.card_attempts,
    lastAttemptFailure: row.last_attempt_failure,
    locale: row.locale,
    lastDecline:
      row.last_decline_reason !== null && row.last_decline_at !== null
        ? { reason: row.last_decline_reason, at: new Date(row.last_decline_at) }
        : null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    expiresAt: new Date(row.expires_at),
  };
}

export type NewInvoice = Omit<
  Invoice,
  | 'cardMasked'
  | 'processorToken'
  | 'failureReason'
  | 'updatedAt'
  | 'status'
  | 'cardAttempts'
  | 'lastAttemptFailure'
  | 'locale'
  | 'lastDecline'
> & { readonly locale?: string | null };

/** Inserts the invoice unless one with its (merchant, reference) exists; returns it or undefined. */
export async function insertInvoice(tx: Sql, invoice: NewInvoice): Promise<Invoice | undefined> {
  const { rows } = await tx.query<Row>(
    `INSERT INTO invoices (id, merchant_id, reference_id, service, currency, amount, fee, total, description,
       service_fields, status, test_mode, created_at, updated_at, expires_at, locale)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'created', $11, $12, $12, $13, $14)
     ON CONFLICT (merchant_id, reference_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      invoice.id,
      invoice.merchantId,
      invoice.referenceId,
      invoice.service,
      invoice.currency,
      invoice.amount,
      invoice.fee,
      invoice.total,
      invoice.description,
      JSON.stringify(invoice.serviceFields),
      invoice.testMode,
      invoice.createdAt.toISOString(),
      invoice.expiresAt.toISOString(),
      invoice.locale ?? null,
    ],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function findInvoice(sql: Sql, id: string, lock = false): Promise<Invoice | undefined> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM invoices WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function findInvoiceByReference(
  sql: Sql,
  merchantId: string,
  referenceId: string,
): Promise<Invoice | undefined> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM invoices WHERE merchant_id = $1 AND reference_id = $2`,
    [merchantId, referenceId],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export interface InvoiceChange {
  readonly status: InvoiceStatus;
  readonly cardMasked?: string;
  readonly processorToken?: string;
  readonly failureReason?: string;
  /** A card attempt that did not pay: the new count and why (null clears the reason). */
  readonly cardAttempts?: number;
  readonly lastAttemptFailure?: string | null;
  /** A card that did not pay: recorded as the invoice's last decline, at `at`. */
  readonly declineReason?: string;
  readonly at: Date;
}

/** Writes a status change (the caller has checked the transition on a locked row). */
export async function updateInvoice(tx: Sql, id: string, change: InvoiceChange): Promise<Invoice> {
  const { rows } = await tx.query<Row>(
    `UPDATE invoices SET status = $2, card_masked = COALESCE($3, card_masked),
       processor_token = COALESCE($4, processor_token), failure_reason = COALESCE($5, failure_reason),
       updated_at = $6, card_attempts = COALESCE($7, card_attempts),
       last_attempt_failure = CASE WHEN $8::boolean THEN $9 ELSE last_attempt_failure END,
       last_decline_reason = COALESCE($10, last_decline_reason),
       last_decline_at = CASE WHEN $10::text IS NULL THEN last_decline_at ELSE $6 END
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [
      id,
      change.status,
      change.cardMasked ?? null,
      change.processorToken ?? null,
      change.failureReason ?? null,
      change.at.toISOString(),
      change.cardAttempts ?? null,
      change.lastAttemptFailure !== undefined,
      change.lastAttemptFailure ?? null,
      change.declineReason ?? null,
    ],
  );
  const row = rows[0];
  if (!row) throw new Error(`invoice ${id} vanished`);
  return fromRow(row);
}

/** Ids of open invoices whose time is up. */
export async function expiredInvoiceIds(sql: Sql, now: Date, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM invoices WHERE status IN ('created', 'processing') AND expires_at <= $1
     ORDER BY expires_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows.map((row) => row.id);
}
