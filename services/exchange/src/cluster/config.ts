import { ConfigError, integer } from '../settings/parse.js';

/**
 * A cluster node's settings (README "Running a cluster"). Cluster mode is on when `NODE_ID` is set
 * with a PostgreSQL `DATABASE_URL`; every node of a cluster shares the database and `MASTER_KEY`.
 */
export interface ClusterConfig {
  /** This node's unique name (`NODE_ID`: letters, digits, `-`, `_`, `.`, up to 64). */
  readonly nodeId: string;
  /**
   * Where the other nodes reach this one (`NODE_URL`, `http://host:port`): this node listens there for
   * the internal HTTP/2 channel (forwarded order entry), beside its public port.
   */
  readonly nodeUrl: string;
  /**
   * Where this node listens for the internal channel (`NODE_LISTEN`, `host:port`). @default NODE_URL's
   * host and port. Set it when the other nodes reach this one at an address it cannot bind itself
   * (NODE_URL behind NAT, a container's published port, a proxy).
   */
  readonly listen: { readonly host: string; readonly port: number };
  /** How long a market lease lasts without renewal (the database's clock). @default 3000 (`CLUSTER_LEASE_MS`, 500..600000) */
  readonly leaseMs: number;
  /** Interval of the heartbeat, lease renewal, claims and owner refresh. @default 250 (`CLUSTER_TICK_MS`, 20..60000) */
  readonly tickMs: number;
  /** Interval at which followed markets read the committed log. @default 100 (`CLUSTER_FOLLOW_MS`, 10..60000) */
  readonly followMs: number;
  /**
   * How long an order for a market without a writer waits for one (a takeover or planned move)
   * before it is answered 503 `unavailable`. @default 3000 (`CLUSTER_HANDOVER_WAIT_MS`, 0..60000)
   */
  readonly handoverWaitMs: number;
}

/** Reads the cluster settings; undefined without `NODE_ID` (one process, as before). */
export function clusterConfig(
  env: NodeJS.ProcessEnv,
  storageKind: 'postgres' | 'pglite',
): ClusterConfig | undefined {
  const nodeId = env.NODE_ID?.trim();
  if (!nodeId) return undefined;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(nodeId)) {
    throw new ConfigError('NODE_ID', 'expected 1 to 64 letters, digits, ".", "-" or "_"');
  }
  if (storageKind !== 'postgres') {
    throw new ConfigError('NODE_ID', 'a cluster needs a PostgreSQL DATABASE_URL shared by every node');
  }
  const nodeUrl = (env.NODE_URL ?? '').trim().replace(/\/+$/, '');
  if (!/^http:\/\/[^/:]+:\d{1,5}$/.test(nodeUrl)) {
    throw new ConfigError('NODE_URL', 'expected http://host:port, where the other nodes reach this one');
  }
  const listenText = (env.NODE_LISTEN ?? '').trim();
  // NODE_URL was checked to be http://host:port above.
  const listenMatch = /^([^/:\s]+):(\d{1,5})$/.exec(listenText || nodeUrl.slice('http://'.length));
  const listenPort = Number(listenMatch?.[2]);
  if (!listenMatch || listenPort < 1 || listenPort > 65_535) {
    throw new ConfigError(
      listenText ? 'NODE_LISTEN' : 'NODE_URL',
      'expected host:port with a port of 1..65535 for the internal channel',
    );
  }
  const leaseMs = integer(env, 'CLUSTER_LEASE_MS', 3_000, 500, 600_000);
  const tickMs = integer(env, 'CLUSTER_TICK_MS', 250, 20, 60_000);
  if (tickMs * 2 > leaseMs)
    throw new ConfigError('CLUSTER_TICK_MS', 'expected at most half of CLUSTER_LEASE_MS');
  return Object.freeze({
    nodeId,
    nodeUrl,
    listen: Object.freeze({ host: listenMatch[1]!, port: listenPort }),
    leaseMs,
    tickMs,
    followMs: integer(env, 'CLUSTER_FOLLOW_MS', 100, 10, 60_000),
    handoverWaitMs: integer(env, 'CLUSTER_HANDOVER_WAIT_MS', 3_000, 0, 60_000),
  });
}
