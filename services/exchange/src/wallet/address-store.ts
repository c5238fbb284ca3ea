import type { Sql } from '../db/database.js';

export interface StoredAddress {
  readonly accountId: number;
  readonly address: string;
  readonly memo: string | null;
}

/** The deposit address of an account in a currency, or undefined before one was generated. */
export async function addressOf(
  db: Sql,
  accountId: number,
  currency: string,
): Promise<StoredAddress | undefined> {
  const { rows } = await db.query<{ address: string; memo: string | null }>(
    'SELECT address, memo FROM deposit_addresses WHERE account_id = $1 AND currency = $2',
    [accountId, currency],
  );
  return rows[0] ? { accountId, ...rows[0] } : undefined;
}

/** Stores an address; false when the account already has one in this currency (or the address is taken). */
export async function saveAddress(
  db: Sql,
  accountId: number,
  currency: string,
  address: string,
  memo: string | null,
  custody: string,
): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO deposit_addresses (account_id, currency, address, memo, custody) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING id`,
    [accountId, currency, address, memo, custody],
  );
  return rows.length > 0;
}

/**
 * The account an incoming transfer pays: by address, and by memo too for currencies that share an
 * address (`withMemo`); undefined when it is not one of ours.
 */
export async function addressOwner(
  db: Sql,
  currency: string,
  address: string,
  memo: string | null,
  withMemo: boolean,
): Promise<number | undefined> {
  const { rows } = withMemo
    ? await db.query<{ account_id: number }>(
        `SELECT account_id FROM deposit_addresses WHERE currency = $1 AND address = $2 AND coalesce(memo, '') = $3`,
        [currency, address, memo ?? ''],
      )
    : await db.query<{ account_id: number }>(
        'SELECT account_id FROM deposit_addresses WHERE currency = $1 AND address = $2 ORDER BY id LIMIT 1',
        [currency, address],
      );
  return rows[0]?.account_id;
}

export async function loadCursor(db: Sql, currency: string): Promise<string | null> {
  const { rows } = await db.query<{ cursor: string }>(
    'SELECT cursor FROM custody_cursors WHERE currency = $1',
    [currency],
  );
  return rows[0]?.cursor ?? null;
}

export async function saveCursor(db: Sql, currency: string, cursor: string): Promise<void> {
  await db.query(
    `INSERT INTO custody_cursors (currency, cursor) VALUES ($1, $2)
     ON CONFLICT (currency) DO UPDATE SET cursor = excluded.cursor, updated_at = now()`,
    [currency, cursor],
  );
}
