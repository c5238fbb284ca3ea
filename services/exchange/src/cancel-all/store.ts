import type { Sql } from '../db/database.js';

/** Open orders of an account (all its keys), optionally of one market, oldest first. */
export async function openOrdersOfAccount(db: Sql, accountId: number, market?: string): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM orders WHERE account_id = $1 AND state = 'wait' AND ($2::text IS NULL OR market = $2)
      ORDER BY id`,
    [accountId, market ?? null],
  );
  return rows.map((row) => Number(row.id));
}

/** Open orders placed with one API key (orders.api_key_id), oldest first. */
export async function openOrdersOfKey(db: Sql, keyId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM orders WHERE api_key_id = $1 AND state = 'wait' ORDER BY id`,
    [keyId],
  );
  return rows.map((row) => Number(row.id));
}

/** Arms (or with `trigger` null disables) the key's switch; a renewal clears an earlier firing and claim. */
export async function armSwitch(
  db: Sql,
  keyId: number,
  accountId: number,
  trigger: number | null,
  now: number,
): Promise<void> {
  await db.query(
    `INSERT INTO cancel_after (api_key_id, account_id, trigger_at, armed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (api_key_id) DO UPDATE
        SET trigger_at = EXCLUDED.trigger_at, armed_at = EXCLUDED.armed_at,
            fired_at = NULL, fired_by = NULL, claimed_by = NULL, claimed_until = NULL`,
    [keyId, accountId, trigger, now],
  );
}

/** A due switch claimed by this node. */
export interface ClaimedSwitch {
  readonly keyId: number;
  readonly accountId: number;
  readonly triggerAt: number;
}

/**
 * Claims every due switch nobody holds (or whose claimer's time ran out). Two nodes running this at
 * once do not both get a switch: the second waits for the first's row lock and then finds the row's
 * new `claimed_until` in the future (PostgreSQL re-checks the WHERE on the updated row).
 */
export async function claimDue(
  db: Sql,
  node: string,
  now: number,
  claimMs: number,
): Promise<ClaimedSwitch[]> {
  const { rows } = await db.query<{ api_key_id: number; account_id: number; trigger_at: string }>(
    `UPDATE cancel_after SET claimed_by = $1, claimed_until = $2::bigint + $3::bigint
      WHERE trigger_at IS NOT NULL AND fired_at IS NULL AND trigger_at <= $2
        AND (claimed_until IS NULL OR claimed_until <= $2)
     RETURNING api_key_id, account_id, trigger_at::text`,
    [node, now, claimMs],
  );
  return rows.map((row) => ({
    keyId: row.api_key_id,
    accountId: row.account_id,
    triggerAt: Number(row.trigger_at),
  }));
}

/**
 * Records the firing, unless the switch was renewed meanwhile (another trigger) or another node took
 * the claim over; answers whether this node's firing is the recorded one.
 */
export async function markFired(
  db: Sql,
  claimed: ClaimedSwitch,
  node: string,
  now: number,
): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE cancel_after SET fired_at = $4, fired_by = $3, claimed_by = NULL, claimed_until = NULL
      WHERE api_key_id = $1 AND trigger_at = $2 AND claimed_by = $3 AND fired_at IS NULL RETURNING 1`,
    [claimed.keyId, claimed.triggerAt, node, now],
  );
  return rows.length === 1;
}

/** Gives a claim up after a failed firing: any node (this one too) tries again at its next check. */
export async function releaseClaim(db: Sql, claimed: ClaimedSwitch, node: string): Promise<void> {
  await db.query(
    `UPDATE cancel_after SET claimed_by = NULL, claimed_until = NULL WHERE api_key_id = $1 AND claimed_by = $2`,
    [claimed.keyId, node],
  );
}
