/**
 * The `withdraw_addresses` table (090_withdraw_addresses.sql). Functions that change an entry take
 * the caller's transaction and lock the row first, so a status changes once whatever runs at the same
 * time (an owner's delete, an operator's revoke, a link, a withdrawal relying on the entry).
 */
import type { Sql } from '../db/database.js';
import { LIVE_STATUSES, type StoredStatus } from './rules.js';

export interface StoredEntry {
  readonly id: number;
  readonly accountId: number;
  readonly currency: string;
  readonly address: string;
  readonly addressKey: string;
  readonly memo: string | null;
  readonly label: string;
  readonly status: StoredStatus;
  readonly createdAt: Date;
  readonly confirmExpiresAt: Date | null;
  readonly confirmedAt: Date | null;
  readonly usableAt: Date | null;
  readonly endedAt: Date | null;
}

interface EntryRow {
  id: number;
  account_id: number;
  currency: string;
  address: string;
  address_key: string;
  memo: string | null;
  label: string;
  status: StoredStatus;
  created_at: Date | string;
  confirm_expires_at: Date | string | null;
  confirmed_at: Date | string | null;
  usable_at: Date | string | null;
  ended_at: Date | string | null;
}

const COLUMNS = `id, account_id, currency, address, address_key, memo, label, status, created_at,
  confirm_expires_at, confirmed_at, usable_at, ended_at`;

const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toEntry(row: EntryRow): StoredEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    currency: row.currency,
    address: row.address,
    addressKey: row.address_key,
    memo: row.memo,
    label: row.label,
    status: row.status,
    createdAt: new Date(row.created_at),
    confirmExpiresAt: date(row.confirm_expires_at),
    confirmedAt: date(row.confirmed_at),
    usableAt: date(row.usable_at),
    endedAt: date(row.ended_at),
  };
}

/** The state the pure rules read. */
export function stateOf(entry: StoredEntry) {
  return {
    status: entry.status,
    usableAt: entry.usableAt?.getTime() ?? null,
    confirmExpiresAt: entry.confirmExpiresAt?.getTime() ?? null,
  };
}

export interface NewEntry {
  readonly accountId: number;
  readonly currency: string;
  readonly address: string;
  readonly addressKey: string;
  readonly memo: string | null;
  readonly label: string;
  readonly now: Date;
  /** Confirmed at once (the account does not confirm by mail): usable from then on. */
  readonly usableAt: Date | null;
}

/** Inserts an entry; a live entry of the same destination makes it fail with 23505 (unique_violation). */
export async function insertEntry(tx: Sql, input: NewEntry): Promise<StoredEntry> {
  const { rows } = await tx.query<EntryRow>(
    `INSERT INTO withdraw_addresses (account_id, currency, address, address_key, memo, label, status,
       created_at, confirmed_at, usable_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
    [
      input.accountId,
      input.currency,
      input.address,
      input.addressKey,
      input.memo,
      input.label,
      input.usableAt ? 'confirmed' : 'awaiting_confirmation',
      input.now,
      input.usableAt ? input.now : null,
      input.usableAt,
    ],
  );
  return toEntry(rows[0]!);
}

/**
 * Ends the entries of one destination left waiting for a confirmation whose links expired (so a new
 * entry of it can be added); nothing else sweeps them, and until then they only show as `expired`.
 */
export async function expireUnconfirmed(
  tx: Sql,
  entry: Pick<NewEntry, 'accountId' | 'currency' | 'addressKey' | 'memo' | 'now'>,
): Promise<void> {
  await tx.query(
    `UPDATE withdraw_addresses SET status = 'expired', ended_at = $5
      WHERE account_id = $1 AND currency = $2 AND address_key = $3 AND coalesce(memo, '') = coalesce($4, '')
        AND status = 'awaiting_confirmation' AND confirm_expires_at <= $5`,
    [entry.accountId, entry.currency, entry.addressKey, entry.memo, entry.now],
  );
}

export async function setConfirmExpiry(tx: Sql, id: number, expiresAt: Date): Promise<void> {
  await tx.query('UPDATE withdraw_addresses SET confirm_expires_at = $2 WHERE id = $1', [id, expiresAt]);
}

export async function liveEntryCount(sql: Sql, accountId: number): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM withdraw_addresses WHERE account_id = $1 AND status = ANY($2::text[])',
    [accountId, [...LIVE_STATUSES]],
  );
  return rows[0]?.n ?? 0;
}

/** Entries of an account, newest first: the live ones (the API), or all of them (the operator). */
export async function listEntries(
  sql: Sql,
  accountId: number,
  filter: { readonly currency?: string | undefined; readonly liveOnly: boolean },
): Promise<StoredEntry[]> {
  const { rows } = await sql.query<EntryRow>(
    `SELECT ${COLUMNS} FROM withdraw_addresses
      WHERE account_id = $1 AND ($2::text IS NULL OR currency = $2)
        AND (NOT $3 OR status = ANY($4::text[]))
      ORDER BY id DESC LIMIT 1000`,
    [accountId, filter.currency ?? null, filter.liveOnly, [...LIVE_STATUSES]],
  );
  return rows.map(toEntry);
}

export async function findEntry(sql: Sql, id: number): Promise<StoredEntry | undefined> {
  const { rows } = await sql.query<EntryRow>(`SELECT ${COLUMNS} FROM withdraw_addresses WHERE id = $1`, [id]);
  return rows[0] ? toEntry(rows[0]) : undefined;
}

export async function lockEntry(tx: Sql, id: number): Promise<StoredEntry | undefined> {
  const { rows } = await tx.query<EntryRow>(
    `SELECT ${COLUMNS} FROM withdraw_addresses WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return rows[0] ? toEntry(rows[0]) : undefined;
}

/**
 * The live entry of a destination, share-locked until the caller's transaction ends: an entry being
 * ended meanwhile is waited for and then not found (its status no longer matches), and one cannot be
 * ended until a withdrawal relying on it is recorded (and then it is found and cancelled).
 */
export async function lockLiveEntryFor(
  tx: Sql,
  destination: { accountId: number; currency: string; addressKey: string; memo: string | null },
): Promise<StoredEntry | undefined> {
  const { rows } = await tx.query<EntryRow>(
    `SELECT ${COLUMNS} FROM withdraw_addresses
      WHERE account_id = $1 AND currency = $2 AND address_key = $3 AND coalesce(memo, '') = coalesce($4, '')
        AND status = ANY($5::text[])
      FOR SHARE`,
    [
      destination.accountId,
      destination.currency,
      destination.addressKey,
      destination.memo,
      [...LIVE_STATUSES],
    ],
  );
  return rows[0] ? toEntry(rows[0]) : undefined;
}

/** Moves a locked entry to `to`; `confirmed` sets its confirmation and usable times. */
export async function changeStatus(
  tx: Sql,
  id: number,
  to: StoredStatus,
  now: Date,
  usableAt: Date | null = null,
): Promise<StoredEntry> {
  const ended = to !== 'confirmed' && to !== 'awaiting_confirmation';
  const { rows } = await tx.query<EntryRow>(
    `UPDATE withdraw_addresses SET status = $2,
            confirmed_at = CASE WHEN $2 = 'confirmed' THEN $3 ELSE confirmed_at END,
            usable_at = CASE WHEN $2 = 'confirmed' THEN $4 ELSE usable_at END,
            ended_at = CASE WHEN $5 THEN $3 ELSE ended_at END
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, to, now, usableAt, ended],
  );
  return toEntry(rows[0]!);
}

/** Withdrawals an entry allowed, with their status (the open ones are cancelled when it ends). */
export async function withdrawalsAllowedBy(
  tx: Sql,
  entryId: number,
): Promise<{ id: number; status: string }[]> {
  const { rows } = await tx.query<{ id: number; status: string }>(
    `SELECT id, status FROM withdrawals WHERE withdraw_address_id = $1
        AND status IN ('awaiting_confirmation', 'queued', 'sending') ORDER BY id`,
    [entryId],
  );
  return rows;
}
