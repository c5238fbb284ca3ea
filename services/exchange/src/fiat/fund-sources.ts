import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Sql } from '../db/database.js';
import { maskFields } from './rules.js';

/** A saved fiat destination as the owner sees it: field values masked. */
export interface FundSource {
  readonly id: number;
  readonly accountId: number;
  /** Lower-case currency code. */
  readonly currency: string;
  /** Gateway service code, e.g. `payment_card_uah`. */
  readonly service: string;
  readonly masked: Readonly<Record<string, string>>;
  readonly label: string;
  readonly createdAt: Date;
}

interface FundSourceRow {
  id: number;
  account_id: number;
  currency: string;
  service: string;
  masked: Record<string, string> | string;
  label: string;
  created_at: Date;
  fields_box: string;
  box_nonce: string;
}

const COLUMNS = 'id, account_id, currency, service, masked, label, created_at, fields_box, box_nonce';

function toFundSource(row: FundSourceRow): FundSource {
  return {
    id: row.id,
    accountId: row.account_id,
    currency: row.currency,
    service: row.service,
    masked: typeof row.masked === 'string' ? (JSON.parse(row.masked) as Record<string, string>) : row.masked,
    label: row.label,
    createdAt: row.created_at,
  };
}

/** The box is bound to its owner and row: copied onto another account's row it does not open. */
function associated(accountId: number, nonce: string): string {
  return `fund_source:${accountId}:${nonce}`;
}

export interface NewFundSource {
  readonly accountId: number;
  readonly currency: string;
  readonly service: string;
  /** Field values already checked against the service's field rules. */
  readonly fields: Readonly<Record<string, string>>;
  readonly label: string;
}

/** Saves a destination: values sealed under the master key, masked copy in clear. */
export async function addFundSource(db: Sql, box: SecretBox, input: NewFundSource): Promise<FundSource> {
  const nonce = randomBytes(12).toString('hex');
  const sealed = box.seal(JSON.stringify(input.fields), associated(input.accountId, nonce));
  const { rows } = await db.query<FundSourceRow>(
    `INSERT INTO fund_sources (account_id, currency, service, fields_box, box_nonce, masked, label)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING ${COLUMNS}`,
    [
      input.accountId,
      input.currency,
      input.service,
      sealed,
      nonce,
      JSON.stringify(maskFields(input.fields)),
      input.label,
    ],
  );
  return toFundSource(rows[0]!);
}

/** The account's saved destinations in `currency` (all currencies without one), oldest first. */
export async function listFundSources(db: Sql, accountId: number, currency?: string): Promise<FundSource[]> {
  const { rows } = await db.query<FundSourceRow>(
    `SELECT ${COLUMNS} FROM fund_sources
      WHERE account_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR currency = $2)
      ORDER BY id`,
    [accountId, currency ?? null],
  );
  return rows.map(toFundSource);
}

/** Deletes (hides) one of the account's destinations; false when it has no such live destination. */
export async function deleteFundSource(db: Sql, accountId: number, id: number): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE fund_sources SET deleted_at = now()
      WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING id`,
    [id, accountId],
  );
  return rows.length > 0;
}

/** A destination with its field values in clear, for a withdrawal of its owner; undefined if not theirs. */
export async function openFundSource(
  db: Sql,
  box: SecretBox,
  accountId: number,
  id: number,
): Promise<(FundSource & { fields: Record<string, string> }) | undefined> {
  const { rows } = await db.query<FundSourceRow>(
    `SELECT ${COLUMNS} FROM fund_sources WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`,
    [id, accountId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const fields = JSON.parse(box.open(row.fields_box, associated(row.account_id, row.box_nonce))) as Record<
    string,
    string
  >;
  return { ...toFundSource(row), fields };
}
