import { ConfigError } from '@platform/http-edge/env-settings';
import type { Sql } from '../db/database.js';
import { liveNodeIds } from './leases.js';

/** How recent a node's heartbeat must be for a process without NODE_ID to take it for a running cluster. */
const LIVE_WITHIN_MS = 30_000;

/**
 * Refuses to start a process without NODE_ID on a database that cluster nodes are writing: it would
 * write every market unfenced beside their owners (its batches and theirs colliding in the command
 * log). A node that stopped gracefully has left (`leaveCluster`); one that was killed counts for
 * LIVE_WITHIN_MS after its last heartbeat.
 */
export async function refuseBesideLiveCluster(db: Sql): Promise<void> {
  const nodes = await liveNodeIds(db, LIVE_WITHIN_MS);
  if (nodes.length === 0) return;
  throw new ConfigError(
    'NODE_ID',
    `unset, but cluster nodes are running on this database (${nodes.join(', ')}): ` +
      'give this process its own NODE_ID and NODE_URL to join them, or stop them first ' +
      `(a killed node counts for ${LIVE_WITHIN_MS / 1000} s after its last heartbeat)`,
  );
}
