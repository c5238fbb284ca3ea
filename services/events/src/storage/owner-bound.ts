import type { SqlQueryable } from './sql-client.js';

/** Tables of things a user holds a bounded number of (calendar feeds, webhook subscriptions). */
export type OwnedTable = 'calendar_feeds' | 'webhook_subscriptions';

/**
 * Whether `owner` holds fewer than `max` rows of `table`, inside `tx`: a transaction lock per
 * table and owner makes two concurrent creations count one after the other, so the bound holds
 * across instances.
 */
export async function ownerHasRoom(
  tx: SqlQueryable,
  table: OwnedTable,
  owner: string,
  max: number,
): Promise<boolean> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1 || $2))', [`${table}:`, owner]);
  const counted = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE owner = $1`, [
    owner,
  ]);
  return Number(counted[0]?.n ?? 0) < max;
}
