import type { Database, Sql } from '../db/database.js';
import { sqlState } from '../db/database.js';

// The cluster's state in PostgreSQL (030_cluster.sql). Every expiry is computed and compared with the
// database's clock (clock_timestamp()), never a node's.

/** A market lease this node took (claim) or holds. */
export interface TakenLease {
  readonly market: string;
  readonly epoch: number;
  readonly slot: number;
  readonly lastOrderId: number;
  readonly lastTradeId: number;
}

/** Who writes a market, as the cluster's tables say. */
export interface MarketOwner {
  readonly market: string;
  readonly owner: string | null;
  readonly epoch: number;
  /** The owner's NODE_URL. */
  readonly url: string | null;
  /** The lease has not expired. */
  readonly live: boolean;
  readonly pinnedTo: string | null;
  readonly movingTo: string | null;
  readonly seq: number;
}

/** Creates the lease row of every market that has none (ids continue after the stored ones). */
export async function ensureLeases(db: Database, markets: readonly string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db.query(
        `INSERT INTO market_leases (market, id_slot, last_order_id, last_trade_id)
         SELECT m.market, (SELECT coalesce(max(id_slot), -1) FROM market_leases) + m.n,
                (SELECT coalesce(max(id), 0) FROM orders), (SELECT coalesce(max(id), 0) FROM trades)
           FROM (SELECT market, row_number() OVER (ORDER BY market) AS n
                   FROM unnest($1::text[]) AS w(market)
                  WHERE NOT EXISTS (SELECT 1 FROM market_leases l WHERE l.market = w.market)) m
         ON CONFLICT (market) DO NOTHING`,
        [markets],
      );
      return;
    } catch (error) {
      // Two nodes starting at once chose the same slot: the second tries again.
      if (sqlState(error) !== '23505' || attempt >= 10) throw error;
    }
  }
}

/** The nodes whose heartbeat is within `withinMs` (the database's clock), in id order. */
export async function liveNodeIds(db: Sql, withinMs: number): Promise<string[]> {
  const { rows } = await db.query<{ node_id: string }>(
    `SELECT node_id FROM cluster_nodes
      WHERE heartbeat_at > clock_timestamp() - $1::int * interval '1 millisecond' ORDER BY node_id`,
    [withinMs],
  );
  return rows.map((row) => row.node_id);
}

/** When this node id last beat its heart (the database's clock, epoch ms), if within `withinMs`. */
export async function lastHeartbeat(db: Sql, node: string, withinMs: number): Promise<number | undefined> {
  const { rows } = await db.query<{ at: string }>(
    `SELECT (extract(epoch FROM heartbeat_at) * 1000)::bigint::text AS at FROM cluster_nodes
      WHERE node_id = $1 AND heartbeat_at > clock_timestamp() - $2::int * interval '1 millisecond'`,
    [node, withinMs],
  );
  return rows[0] ? Number(rows[0].at) : undefined;
}

/** A node stopping gracefully leaves the cluster: no process without NODE_ID takes it for running. */
export async function leaveCluster(db: Sql, node: string): Promise<void> {
  await db.query('DELETE FROM cluster_nodes WHERE node_id = $1', [node]);
}

/** This node is alive (how far its copy of each market is, and the background rounds it ran). */
export async function heartbeat(
  db: Sql,
  node: string,
  url: string,
  applied: Record<string, number>,
  jobRounds: Record<string, number>,
): Promise<void> {
  await db.query(
    `INSERT INTO cluster_nodes (node_id, url, applied, job_rounds) VALUES ($1, $2, $3::jsonb, $4::jsonb)
     ON CONFLICT (node_id) DO UPDATE
        SET url = $2, heartbeat_at = clock_timestamp(), applied = $3::jsonb, job_rounds = $4::jsonb`,
    [node, url, JSON.stringify(applied), JSON.stringify(jobRounds)],
  );
}

/** Renews every unexpired lease this node holds; returns them (market → epoch). */
export async function renewLeases(db: Sql, node: string, leaseMs: number): Promise<Map<string, number>> {
  const { rows } = await db.query<{ market: string; epoch: string }>(
    `UPDATE market_leases SET expires_at = clock_timestamp() + $2::int * interval '1 millisecond'
      WHERE owner = $1 AND expires_at > clock_timestamp()
     RETURNING market, epoch::text`,
    [node, leaseMs],
  );
  return new Map(rows.map((row) => [row.market, Number(row.epoch)]));
}

/**
 * Takes markets without a live owner: first those pinned or being moved to this node, then up to
 * this node's fair share (markets / live nodes, rounded up) of the others not pinned or moving to
 * another live node. Each taken lease gets the next epoch, which fences out the previous owner.
 */
export async function claimLeases(
  db: Sql,
  node: string,
  leaseMs: number,
  aliveMs: number,
): Promise<TakenLease[]> {
  const { rows } = await db.query<{
    market: string;
    epoch: string;
    id_slot: number;
    last_order_id: string;
    last_trade_id: string;
  }>(
    `WITH alive AS (
       SELECT node_id FROM cluster_nodes WHERE heartbeat_at > clock_timestamp() - $3::int * interval '1 millisecond'
     ), free AS (
       SELECT market, pinned_to, moving_to FROM market_leases
        WHERE owner IS NULL OR expires_at <= clock_timestamp() OR (moving_to = $1 AND owner IS NULL)
     ), mine AS (
       SELECT market FROM free WHERE pinned_to = $1 OR moving_to = $1
     ), share AS (
       SELECT greatest(ceil((SELECT count(*) FROM market_leases)::numeric / greatest((SELECT count(*) FROM alive), 1))
                       - (SELECT count(*) FROM market_leases WHERE owner = $1 AND expires_at > clock_timestamp()), 0) AS n
     ), others AS (
       SELECT market FROM free
        WHERE (pinned_to IS NULL OR pinned_to NOT IN (SELECT node_id FROM alive))
          AND (moving_to IS NULL OR moving_to NOT IN (SELECT node_id FROM alive))
          AND market NOT IN (SELECT market FROM mine)
        ORDER BY market LIMIT (SELECT n FROM share)
     ), wanted AS (
       SELECT l.market FROM market_leases l
        WHERE l.market IN (SELECT market FROM mine UNION ALL SELECT market FROM others)
          AND (l.owner IS NULL OR l.expires_at <= clock_timestamp())
        FOR UPDATE SKIP LOCKED
     )
     UPDATE market_leases l
        SET owner = $1, epoch = l.epoch + 1, moving_to = NULL,
            expires_at = clock_timestamp() + $2::int * interval '1 millisecond',
            -- Above every stored id: a process without NODE_ID on this database (before the cluster,
            -- or between its runs) numbered its orders and trades one after the other, through the
            -- slot's ids too. Two index lookups per claim.
            last_order_id = greatest(l.last_order_id, (SELECT coalesce(max(id), 0) FROM orders)),
            last_trade_id = greatest(l.last_trade_id, (SELECT coalesce(max(id), 0) FROM trades))
       FROM wanted WHERE l.market = wanted.market
     RETURNING l.market, l.epoch::text, l.id_slot, l.last_order_id::text, l.last_trade_id::text`,
    [node, leaseMs, aliveMs],
  );
  return rows.map((row) => ({
    market: row.market,
    epoch: Number(row.epoch),
    slot: row.id_slot,
    lastOrderId: Number(row.last_order_id),
    lastTradeId: Number(row.last_trade_id),
  }));
}

/** Gives a lease up (after its writer drained): the next claim of any node takes it at once. */
export async function releaseLease(db: Sql, node: string, market: string, epoch: number): Promise<void> {
  await db.query(
    `UPDATE market_leases SET owner = NULL, expires_at = '-infinity'
      WHERE market = $1 AND owner = $2 AND epoch = $3`,
    [market, node, epoch],
  );
}

/** Every market's owner and lease, as stored now. */
export async function marketOwners(db: Sql): Promise<MarketOwner[]> {
  const { rows } = await db.query<{
    market: string;
    owner: string | null;
    epoch: string;
    url: string | null;
    live: boolean;
    pinned_to: string | null;
    moving_to: string | null;
    seq: string;
  }>(
    `SELECT l.market, l.owner, l.epoch::text, n.url, (l.owner IS NOT NULL AND l.expires_at > clock_timestamp()) AS live,
            l.pinned_to, l.moving_to, l.seq::text
       FROM market_leases l LEFT JOIN cluster_nodes n ON n.node_id = l.owner ORDER BY l.market`,
  );
  return rows.map((row) => ({
    market: row.market,
    owner: row.owner,
    epoch: Number(row.epoch),
    url: row.url,
    live: row.live,
    pinnedTo: row.pinned_to,
    movingTo: row.moving_to,
    seq: Number(row.seq),
  }));
}

/**
 * Keeps the feed of the markets this node follows logged (066_feed_wanted.sql): those another node
 * writes, and, while another node is live (heartbeat within `aliveMs`), those nobody writes (the
 * next owner may be that node). Where the flag runs out within `windowMs / 2`, it is set to
 * `windowMs` from now. Alone, a node flags nothing: a one-node cluster logs no feed. One statement
 * per market, so that this never holds one lease row while waiting for another (a batch holding a
 * balance this statement does not touch could otherwise wait on it in a cycle). Returns the markets
 * whose flag was set.
 */
export async function keepFeedWanted(
  db: Sql,
  node: string,
  windowMs: number,
  aliveMs: number,
): Promise<string[]> {
  const { rows } = await db.query<{ market: string }>(
    `SELECT market FROM market_leases
      WHERE feed_wanted_until < clock_timestamp() + $2::int * interval '1 millisecond'
        AND CASE WHEN owner IS NOT NULL AND expires_at > clock_timestamp() THEN owner <> $1
                 ELSE EXISTS (SELECT 1 FROM cluster_nodes WHERE node_id <> $1
                                 AND heartbeat_at > clock_timestamp() - $3::int * interval '1 millisecond')
            END
      ORDER BY market`,
    [node, Math.floor(windowMs / 2), aliveMs],
  );
  for (const { market } of rows) {
    await db.query(
      `UPDATE market_leases SET feed_wanted_until = clock_timestamp() + $2::int * interval '1 millisecond'
        WHERE market = $1`,
      [market, windowMs],
    );
  }
  return rows.map((row) => row.market);
}
