import type { Sql } from '../db/database.js';
import { marketOwners } from './leases.js';

export const CLUSTER_USAGE = `  cluster status                                nodes (alive, heartbeat age), markets (owner, epoch, pin,
                                 planned move, last committed seq, feed logged for followers) and
                                 each node's lag per market
  market move <market> <node>                   planned handover: the owner writes what it queued, then
                                 <node> takes the market (no order refused; held up to CLUSTER_HANDOVER_WAIT_MS)
  market pin <market> <node>|none               keeps the market on <node> while it is alive (none: unpin)`;

/** A refusal of a cluster command (unknown market or node). */
export class ClusterCommandError extends Error {}

/** `cluster status`: what the cluster's tables say now (times by the database's clock). */
export async function clusterStatus(db: Sql, leaseMs = 3_000) {
  const { rows: nodes } = await db.query<{
    node_id: string;
    url: string;
    age_ms: string;
    applied: Record<string, number>;
    job_rounds: Record<string, number>;
  }>(
    `SELECT node_id, url, (extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000)::bigint::text AS age_ms,
            applied, job_rounds
       FROM cluster_nodes ORDER BY node_id`,
  );
  const { rows: jobs } = await db.query<{ job: string; owner: string | null; epoch: string; live: boolean }>(
    `SELECT job, owner, epoch::text, (owner IS NOT NULL AND expires_at > clock_timestamp()) AS live
       FROM cluster_jobs ORDER BY job`,
  );
  const markets = await marketOwners(db);
  // How long each owner goes on logging its batches' feed for the nodes following the market.
  const { rows: feeds } = await db.query<{ market: string; ms: string }>(
    `SELECT market, greatest(0, (extract(epoch FROM feed_wanted_until - clock_timestamp()) * 1000)::bigint)::text AS ms
       FROM market_leases WHERE feed_wanted_until > clock_timestamp()`,
  );
  const feedWantedMs = new Map(feeds.map((row) => [row.market, Number(row.ms)]));
  const alive = (age: number) => age <= leaseMs;
  return {
    nodes: nodes.map((node) => ({
      node: node.node_id,
      url: node.url,
      alive: alive(Number(node.age_ms)),
      heartbeatAgeMs: Number(node.age_ms),
      owns: markets.filter((m) => m.live && m.owner === node.node_id).map((m) => m.market),
      runs: jobs.filter((j) => j.live && j.owner === node.node_id).map((j) => j.job),
      // Rounds of each background job this node ran since it started (as of its last heartbeat).
      jobRounds: node.job_rounds,
      // Committed batches of each market this node's copy has not applied yet (as of its last heartbeat).
      lag: Object.fromEntries(
        markets.map((m) => [m.market, Math.max(0, m.seq - (node.applied[m.market] ?? 0))]),
      ),
    })),
    markets: markets.map((m) => ({
      market: m.market,
      owner: m.live ? m.owner : null,
      epoch: m.epoch,
      pinnedTo: m.pinnedTo,
      movingTo: m.movingTo,
      seq: m.seq,
      // How long the owner goes on logging each batch's feed for the nodes that follow the market
      // (0: none asks, as in a one-node cluster; README "The live feed on every node").
      feedWantedForMs: feedWantedMs.get(m.market) ?? 0,
    })),
    jobs: jobs.map((j) => ({ job: j.job, owner: j.live ? j.owner : null, epoch: Number(j.epoch) })),
  };
}

/** `market move` and `market pin`. */
export async function marketCommand(
  db: Sql,
  action: 'move' | 'pin',
  market: string | undefined,
  node: string | undefined,
) {
  if (!market || !node) throw new ClusterCommandError(`usage: market ${action} <market> <node>`);
  if (!(action === 'pin' && node === 'none')) {
    const { rows } = await db.query('SELECT 1 FROM cluster_nodes WHERE node_id = $1', [node]);
    if (rows.length === 0) throw new ClusterCommandError(`no node "${node}" has joined the cluster`);
  }
  const column = action === 'move' ? 'moving_to' : 'pinned_to';
  const { rows } = await db.query<{ market: string }>(
    `UPDATE market_leases SET ${column} = $2 WHERE market = $1 RETURNING market`,
    [market.toLowerCase(), action === 'pin' && node === 'none' ? null : node],
  );
  if (rows.length === 0) throw new ClusterCommandError(`no market "${market}" in the cluster`);
  return {
    market: market.toLowerCase(),
    [action === 'move' ? 'movingTo' : 'pinnedTo']: node === 'none' ? null : node,
  };
}
