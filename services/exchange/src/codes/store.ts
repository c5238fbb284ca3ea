import type { Sql } from '../db/database.js';
import type { CodeStatus } from './rules.js';

/** A transfer code as stored; `codeBox` is the sealed code (see service.ts). */
export interface StoredCode {
  readonly id: number;
  readonly sn: string;
  readonly ownerId: number;
  readonly publicSegment: string;
  readonly codeBox: string;
  readonly recipient: string;
  readonly currency: string;
  /** Minor units (ledger precision of the currency). */
  readonly amount: bigint;
  readonly status: CodeStatus;
  readonly heldFrom: 'unconfirmed' | 'active' | null;
  readonly nonRefundableBefore: Date;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly redeemedAt: Date | null;
  readonly redeemerId: number | null;
  readonly canceledAt: Date | null;
  readonly comment: string;
  readonly privateComment: string;
}

interface CodeRow {
  id: number;
  sn: string;
  owner_id: number;
  public_segment: string;
  code_box: string;
  recipient: string;
  currency: string;
  amount: string;
  status: CodeStatus;
  held_from: 'unconfirmed' | 'active' | null;
  non_refundable_before: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
  redeemed_at: Date | string | null;
  redeemer_id: number | null;
  canceled_at: Date | string | null;
  comment: string;
  private_comment: string;
}

const COLUMNS = `id, sn, owner_id, public_segment, code_box, recipient, currency, amount::text AS amount, status,
  held_from, non_refundable_before, created_at, updated_at, redeemed_at, redeemer_id, canceled_at, comment,
  private_comment`;

const date = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
const maybeDate = (value: Date | string | null): Date | null => (value === null ? null : date(value));
/** Timestamps go to the database as ISO text: both drivers agree on it. */
export const iso = (ms: number): string => new Date(ms).toISOString();

function toCode(row: CodeRow): StoredCode {
  return {
    id: row.id,
    sn: row.sn,
    ownerId: row.owner_id,
    publicSegment: row.public_segment,
    codeBox: row.code_box,
    recipient: row.recipient,
    currency: row.currency,
    amount: BigInt(row.amount),
    status: row.status,
    heldFrom: row.held_from,
    nonRefundableBefore: date(row.non_refundable_before),
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    redeemedAt: maybeDate(row.redeemed_at),
    redeemerId: row.redeemer_id,
    canceledAt: maybeDate(row.canceled_at),
    comment: row.comment,
    privateComment: row.private_comment,
  };
}

export interface NewCode {
  readonly sn: string;
  readonly ownerId: number;
  readonly publicSegment: string;
  readonly codeHash: string;
  readonly codeBox: string;
  readonly recipient: string;
  readonly currency: string;
  readonly amount: bigint;
  readonly status: CodeStatus;
  readonly nonRefundableBefore: number;
  readonly now: number;
  readonly comment: string;
  readonly privateComment: string;
}

export async function insertCode(tx: Sql, code: NewCode): Promise<StoredCode> {
  const { rows } = await tx.query<CodeRow>(
    `INSERT INTO svc_codes (sn, owner_id, public_segment, code_hash, code_box, recipient, currency, amount, status,
                            non_refundable_before, created_at, updated_at, comment, private_comment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10::timestamptz, $11::timestamptz, $11::timestamptz, $12, $13)
     RETURNING ${COLUMNS}`,
    [
      code.sn,
      code.ownerId,
      code.publicSegment,
      code.codeHash,
      code.codeBox,
      code.recipient,
      code.currency,
      code.amount.toString(),
      code.status,
      iso(code.nonRefundableBefore),
      iso(code.now),
      code.comment,
      code.privateComment,
    ],
  );
  return toCode(rows[0]!);
}

/** The code with this keyed hash, its row locked until the transaction ends (redemption). */
export async function lockCodeByHash(tx: Sql, codeHash: string): Promise<StoredCode | undefined> {
  const { rows } = await tx.query<CodeRow>(
    `SELECT ${COLUMNS} FROM svc_codes WHERE code_hash = $1 FOR UPDATE`,
    [codeHash],
  );
  return rows[0] ? toCode(rows[0]) : undefined;
}

/** The code with this id, its row locked until the transaction ends (operator actions, confirmation). */
export async function lockCodeById(tx: Sql, id: number): Promise<StoredCode | undefined> {
  const { rows } = await tx.query<CodeRow>(`SELECT ${COLUMNS} FROM svc_codes WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0] ? toCode(rows[0]) : undefined;
}

export async function findCodeById(db: Sql, id: number): Promise<StoredCode | undefined> {
  const { rows } = await db.query<CodeRow>(`SELECT ${COLUMNS} FROM svc_codes WHERE id = $1`, [id]);
  return rows[0] ? toCode(rows[0]) : undefined;
}

export async function findCodeByPublicSegment(db: Sql, segment: string): Promise<StoredCode | undefined> {
  const { rows } = await db.query<CodeRow>(`SELECT ${COLUMNS} FROM svc_codes WHERE public_segment = $1`, [
    segment,
  ]);
  return rows[0] ? toCode(rows[0]) : undefined;
}

/** A code named by an operator: numeric id, sn or public segment. */
export async function findCodeByRef(db: Sql, ref: string): Promise<StoredCode | undefined> {
  if (/^\d+$/.test(ref)) return findCodeById(db, Number(ref));
  const { rows } = await db.query<CodeRow>(
    `SELECT ${COLUMNS} FROM svc_codes WHERE sn = $1 OR public_segment = $1`,
    [ref],
  );
  return rows[0] ? toCode(rows[0]) : undefined;
}

export interface StatusChange {
  readonly status: CodeStatus;
  readonly heldFrom: 'unconfirmed' | 'active' | null;
  readonly now: number;
  /** Set when the code is redeemed. */
  readonly redeemerId?: number;
}

/** Moves a locked code from `from` to a new status; false when it was not in `from` any more. */
export async function changeStatus(
  tx: Sql,
  id: number,
  from: CodeStatus,
  change: StatusChange,
): Promise<boolean> {
  const redeemed = change.status === 'redeemed';
  const { rows } = await tx.query(
    `UPDATE svc_codes SET status = $3, held_from = $4, updated_at = $5::timestamptz,
            redeemer_id = CASE WHEN $6::boolean THEN $7::integer ELSE redeemer_id END,
            redeemed_at = CASE WHEN $6::boolean THEN $5::timestamptz ELSE redeemed_at END,
            canceled_at = CASE WHEN $3 = 'canceled' THEN $5::timestamptz ELSE canceled_at END
      WHERE id = $1 AND status = $2 RETURNING id`,
    [id, from, change.status, change.heldFrom, iso(change.now), redeemed, change.redeemerId ?? null],
  );
  return rows.length === 1;
}

export type ListOrder = 'created_at' | 'redeemed_at' | 'amount';

export interface ListQuery {
  readonly page: number;
  readonly perPage: number;
  readonly orderBy: ListOrder;
  readonly orderDir: 'asc' | 'desc';
  /** Only codes in these statuses (issued-by-me); empty or absent: all. */
  readonly statuses?: readonly CodeStatus[];
}

/**
 * Codes issued by (`owner_id`) or redeemed by (`redeemer_id`) one account, one page. Amounts of
 * different currencies are compared by value (scaled to 18 decimals), not by minor units; codes
 * without a redemption time sort last; ties go by id in the same direction.
 */
export async function listCodes(
  db: Sql,
  by: 'owner_id' | 'redeemer_id',
  accountId: number,
  query: ListQuery,
): Promise<StoredCode[]> {
  const dir = query.orderDir === 'asc' ? 'ASC' : 'DESC';
  const key =
    query.orderBy === 'amount'
      ? `(c.amount * power(10::numeric, 18 - (SELECT cur.precision FROM currencies cur WHERE cur.code = c.currency)))`
      : `c.${query.orderBy}`;
  const statuses = query.statuses && query.statuses.length > 0 ? [...query.statuses] : null;
  const { rows } = await db.query<CodeRow>(
    `SELECT ${COLUMNS} FROM svc_codes c
      WHERE c.${by} = $1 AND ($2::text[] IS NULL OR c.status = ANY($2::text[]))
      ORDER BY ${key} ${dir} NULLS LAST, c.id ${dir}
      LIMIT $3 OFFSET $4`,
    [accountId, statuses, query.perPage, (query.page - 1) * query.perPage],
  );
  return rows.map(toCode);
}

/** Id and svcid of a user account (the redeemer), or undefined. */
export async function userAccount(
  db: Sql,
  id: number,
): Promise<{ id: number; email: string; svcid: string; withdrawConfirmation: boolean } | undefined> {
  const { rows } = await db.query<{
    id: number;
    email: string;
    svcid: string;
    withdraw_confirmation: boolean;
  }>(`SELECT id, email, svcid, withdraw_confirmation FROM accounts WHERE id = $1 AND kind = 'user'`, [id]);
  const row = rows[0];
  return row
    ? { id: row.id, email: row.email, svcid: row.svcid, withdrawConfirmation: row.withdraw_confirmation }
    : undefined;
}

/** Unconfirmed codes none of whose confirmation links can still be used at `now` (expired unused). */
export async function unconfirmedWithoutLinks(db: Sql, now: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `SELECT c.id FROM svc_codes c
      WHERE c.status = 'unconfirmed'
        AND NOT EXISTS (SELECT 1 FROM action_links l
                         WHERE l.purpose = 'svc_code' AND l.subject_id = c.id
                           AND l.used_at IS NULL AND l.expires_at > $1::timestamptz)
      ORDER BY c.id LIMIT 1000`,
    [iso(now)],
  );
  return rows.map((row) => row.id);
}

/** Is there a user account with this svcid (a recipient)? */
export async function svcidExists(db: Sql, svcid: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM accounts WHERE svcid = $1 AND kind = 'user'`, [svcid]);
  return rows.length > 0;
}

/** Id of the escrow system account (012_svc_codes.sql). */
export async function escrowAccountId(db: Sql): Promise<number> {
  const { rows } = await db.query<{ id: number }>(`SELECT id FROM accounts WHERE system_code = 'svc_codes'`);
  if (!rows[0]) throw new Error('system account svc_codes is missing: migrations not applied?');
  return rows[0].id;
}

/** Escrowed amount per currency: the escrow account's available balances. */
export async function escrowBalances(db: Sql): Promise<Map<string, bigint>> {
  const { rows } = await db.query<{ currency: string; available: string }>(
    `SELECT b.currency, b.available::text FROM balances b JOIN accounts a ON a.id = b.account_id
      WHERE a.system_code = 'svc_codes'`,
  );
  return new Map(rows.map((row) => [row.currency, BigInt(row.available)]));
}

/** Sum of the codes still in escrow (live statuses) per currency. */
export async function liveCodeTotals(db: Sql): Promise<Map<string, bigint>> {
  const { rows } = await db.query<{ currency: string; total: string }>(
    `SELECT currency, sum(amount)::text AS total FROM svc_codes
      WHERE status IN ('unconfirmed', 'active', 'onhold') GROUP BY currency`,
  );
  return new Map(rows.map((row) => [row.currency, BigInt(row.total)]));
}
