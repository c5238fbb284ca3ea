import { WireConnection, type WireTarget } from './memcached-wire.js';

/**
 * Connections to one memcached node. Any number may be in use at once; at most `maxIdle` are kept
 * open between commands (MEMSTORE_MAX_IDLE_CONNS, as gomemcache's MaxIdleConns), the rest closed.
 */
export class NodePool {
  private readonly idle: WireConnection[] = [];
  private closed = false;

  constructor(
    /** The node's identity in the node list (`host:port`, or the SRV `target:port`). */
    readonly id: string,
    readonly target: WireTarget,
    private readonly maxIdle: number,
    private readonly timeoutMs: number,
  ) {}

  /** Runs `use` on a connection; a connection that failed is dropped instead of kept. */
  async with<T>(use: (c: WireConnection) => Promise<T>): Promise<T> {
    let conn = this.idle.pop();
    while (conn?.broken) conn = this.idle.pop();
    conn ??= new WireConnection(this.target, this.timeoutMs);
    try {
      return await use(conn);
    } finally {
      if (!conn.broken && !this.closed && this.idle.length < this.maxIdle) this.idle.push(conn);
      else conn.close();
    }
  }

  idleCount(): number {
    return this.idle.length;
  }

  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.close();
  }
}
