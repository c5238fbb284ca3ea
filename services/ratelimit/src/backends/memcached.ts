import type { ConnectionOptions } from 'node:tls';
import type { Algorithm } from '../rules/algorithm.js';
import type { Counter, StatsRegistry } from '../stats/registry.js';
import { lookupSrvNodes, type NodeAddress, nodeIndexForKey, parseHostPorts } from './memcached-nodes.js';
import { NodePool } from './memcached-pool.js';
import { parseLine, parseValues } from './memcached-wire.js';
import { type AlgorithmReply, type CounterBackend, type CounterOp, InvalidKeyError } from './types.js';

/**
 * Memcached counters (reference "Memcached"): read the counts with one multi-get per node, answer
 * from read + hits (keys of a node that fails the read count as 0), and increment asynchronously (incr; on a miss add with the expiry; on a lost
 * add race incr again), so a client may briefly exceed its quota under simultaneous requests.
 * Within one process, a read waits for this process's pending increments of the same key.
 */
export type MemcachedNodeSource =
  | { kind: 'list'; hostPorts: string }
  | { kind: 'srv'; srv: string; refreshMs: number; dnsServers: readonly string[] };

/**
 * The reference's memcache stats; gostats writes a tag into the name as `.__code=<value>`, so
 * `ratelimit.memcache.multiget.__code=success` and so on.
 */
export interface MemcachedStats {
  readonly multiGetSuccess: Counter;
  readonly multiGetError: Counter;
  readonly incrementSuccess: Counter;
  readonly incrementMiss: Counter;
  readonly incrementError: Counter;
  readonly addSuccess: Counter;
  readonly addError: Counter;
  readonly addNotStored: Counter;
  readonly keysRequested: Counter;
  readonly keysFound: Counter;
}

export function memcachedStats(registry: StatsRegistry): MemcachedStats {
  const c = (name: string) => registry.counter(`ratelimit.memcache.${name}`);
  return {
    multiGetSuccess: c('multiget.__code=success'),
    multiGetError: c('multiget.__code=error'),
    incrementSuccess: c('increment.__code=success'),
    incrementMiss: c('increment.__code=miss'),
    incrementError: c('increment.__code=error'),
    addSuccess: c('add.__code=success'),
    addError: c('add.__code=error'),
    addNotStored: c('add.__code=not_stored'),
    keysRequested: c('keys_requested'),
    keysFound: c('keys_found'),
  };
}

export interface MemcachedBackendOptions {
  nodes: MemcachedNodeSource;
  /** `MEMSTORE_MAX_IDLE_CONNS`: idle connections kept per node. */
  maxIdleConns: number;
  /** TLS options when `MEMSTORE_TLS` is on. */
  tls: ConnectionOptions | undefined;
  /** Bound of one command (connect included), in ms. */
  timeoutMs: number;
  /** Probe the nodes every second and report health (KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION). */
  healthCheckActiveConnection: boolean;
  /** Called when an SRV refresh fails (the old node list is kept). */
  onLookupError?: (error: Error) => void;
  /** The reference's `ratelimit.memcache.*` counters (its stats-collecting client). */
  stats?: MemcachedStats;
  /** Hears about a failed multi-get (the reference logs it at error); the read still answers. */
  onReadError?: (error: Error, keys: readonly string[]) => void;
}

const MAX_KEY_LENGTH = 250;
// Whitespace and control characters break the memcached protocol.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is rejected
const BAD_KEY = /[\s\x00-\x1f\x7f]/;

export class InvalidMemcachedKeyError extends InvalidKeyError {}

export class MemcachedBackend implements CounterBackend {
  readonly description: string;
  /**
   * Only the reference's fixed window: memcached has no script to run a sliding window or a token
   * bucket atomically next to its data, so a rule asking for one refuses its file at load.
   */
  readonly algorithms: ReadonlySet<Algorithm> = new Set(['fixed_window']);
  private pools: NodePool[] = [];
  private readonly pending = new Map<string, Promise<unknown>>();
  private isHealthy = true;
  private readonly listeners: ((healthy: boolean) => void)[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly firstLookup: Promise<void>;

  constructor(private readonly options: MemcachedBackendOptions) {
    const n = options.nodes;
    this.description =
      n.kind === 'list' ? `memcached ${n.hostPorts}` : `memcached SRV ${n.srv} (refresh ${n.refreshMs} ms)`;
    if (n.kind === 'list') {
      this.setNodes(parseHostPorts(n.hostPorts));
      this.firstLookup = Promise.resolve();
    } else {
      this.firstLookup = this.refresh();
      // Re-resolve periodically; while no lookup has worked yet, retry every second.
      const timer = setInterval(
        () => {
          if (n.refreshMs > 0 || this.pools.length === 0) void this.refresh();
        },
        n.refreshMs > 0 ? n.refreshMs : 1000,
      );
      timer.unref();
      this.timers.push(timer);
    }
    if (options.healthCheckActiveConnection) {
      const prober = setInterval(() => void this.probe().then((ok) => this.setHealth(ok)), 1000);
      prober.unref();
      this.timers.push(prober);
    }
  }

  /** The current node ids in node-choice order. */
  nodeIds(): string[] {
    return this.pools.map((p) => p.id);
  }

  /** Index (into nodeIds()) of the node a key lives on. */
  nodeIndexOf(key: string): number {
    return nodeIndexForKey(key, this.pools.length);
  }

  private async refresh(): Promise<void> {
    const n = this.options.nodes;
    if (n.kind !== 'srv') return;
    try {
      this.setNodes(await lookupSrvNodes(n.srv, n.dnsServers));
    } catch (error) {
      this.options.onLookupError?.(error as Error);
    }
  }

  private setNodes(nodes: readonly NodeAddress[]): void {
    const matches = (p: NodePool, a: NodeAddress) =>
      p.id === a.id && p.target.host === a.host && p.target.port === a.port;
    const same = nodes.length === this.pools.length && nodes.every((a, i) => matches(this.pools[i]!, a));
    if (same) return;
    const old = this.pools;
    const { tls, maxIdleConns, timeoutMs } = this.options;
    this.pools = nodes.map(
      (a) =>
        old.find((p) => matches(p, a)) ??
        new NodePool(a.id, { host: a.host, port: a.port, tls }, maxIdleConns, timeoutMs),
    );
    for (const p of old) if (!this.pools.includes(p)) p.close();
  }

  private setHealth(ok: boolean): void {
    if (ok === this.isHealthy) return;
    this.isHealthy = ok;
    for (const l of this.listeners) l(ok);
  }

  /** True when every node answers `version` within the timeout. */
  private async probe(): Promise<boolean> {
    if (this.pools.length === 0) return false;
    const results = await Promise.allSettled(
      this.pools.map((p) => p.with((c) => c.send('version\r\n', parseLine))),
    );
    return results.every((r) => r.status === 'fulfilled' && r.value.startsWith('VERSION'));
  }

  private static check(key: string): void {
    if (Buffer.byteLength(key) > MAX_KEY_LENGTH || BAD_KEY.test(key)) {
      throw new InvalidMemcachedKeyError(
        `memcached key longer than ${MAX_KEY_LENGTH} bytes or with whitespace/control characters: ${JSON.stringify(key.slice(0, 60))}`,
      );
    }
  }

  private poolFor(key: string): NodePool {
    if (this.pools.length === 0) throw new Error('memcached: no nodes (SRV lookup has not succeeded)');
    return this.pools[nodeIndexForKey(key, this.pools.length)]!;
  }

  /** The stored counts (0 for a missing key); rejects when a node fails to answer. */
  async read(ops: readonly CounterOp[]): Promise<number[]> {
    const { counts, failure } = await this.lookup(ops);
    if (failure) throw failure;
    return counts;
  }

  /**
   * Reads the counts with one multi-get per node, after this process's pending increments of the
   * same keys; a failed node's keys count as 0 and its error is returned beside the counts.
   */
  private async lookup(ops: readonly CounterOp[]): Promise<{ counts: number[]; failure?: Error }> {
    for (const op of ops) MemcachedBackend.check(op.key);
    if (ops.length === 0) return { counts: [] };
    await this.firstLookup;
    const waits = ops.map((op) => this.pending.get(op.key)).filter((p) => p !== undefined);
    if (waits.length > 0) await Promise.allSettled(waits);
    const found = new Map<string, Buffer>();
    const stats = this.options.stats;
    stats?.keysRequested.add(new Set(ops.map((op) => op.key)).size);
    const failure = await this.multiGet(ops, found);
    if (failure) stats?.multiGetError.inc();
    else {
      stats?.multiGetSuccess.inc();
      stats?.keysFound.add(found.size);
    }
    const counts = ops.map((op) => {
      const value = found.get(op.key);
      return value === undefined ? 0 : Number(value.toString('ascii').trim()) || 0;
    });
    return failure ? { counts, failure } : { counts };
  }

  /**
   * Fills `found` from every node that answers (gomemcache's GetMulti keeps the items of the nodes
   * that answered too); returns the last error of a node that did not, if any.
   */
  private async multiGet(ops: readonly CounterOp[], found: Map<string, Buffer>): Promise<Error | undefined> {
    const byNode = new Map<NodePool, Set<string>>();
    try {
      for (const op of ops) {
        const pool = this.poolFor(op.key);
        const keys = byNode.get(pool) ?? new Set<string>();
        keys.add(op.key);
        byNode.set(pool, keys);
      }
    } catch (error) {
      return error as Error;
    }
    const answers = await Promise.allSettled(
      [...byNode].map(async ([pool, keys]) => {
        const values = await pool.with((c) => c.send(`get ${[...keys].join(' ')}\r\n`, parseValues));
        for (const [k, v] of values) found.set(k, v);
      }),
    );
    let failure: Error | undefined;
    for (const a of answers) if (a.status === 'rejected') failure = a.reason as Error;
    return failure;
  }

  /**
   * The reference's DoLimit: the counts after this request's hits, from the read; the increments
   * follow asynchronously. A failed read does not fail the call: as the reference, it is logged
   * (`onReadError`) and counted (`multiget.__code=error`), the keys it did not bring back count
   * from 0, and the increments are still attempted.
   */
  async increment(ops: readonly CounterOp[]): Promise<number[]> {
    const { counts: current, failure } = await this.lookup(ops);
    if (failure)
      this.options.onReadError?.(
        failure,
        ops.map((op) => op.key),
      );
    const running = new Map<string, number>();
    const after = ops.map((op, i) => {
      const value = (running.get(op.key) ?? current[i]!) + op.hits;
      running.set(op.key, value);
      return value;
    });
    for (const op of ops) if (op.hits > 0) this.incrementLater(op);
    return after;
  }

  /** The reference's sequence: incr; on NOT_FOUND add with the expiry; on NOT_STORED incr again. */
  private async incrementNow(op: CounterOp): Promise<void> {
    const pool = this.poolFor(op.key);
    const stats = this.options.stats;
    const counted = async <T>(send: () => Promise<T>, onError: Counter | undefined): Promise<T> => {
      try {
        return await send();
      } catch (error) {
        onError?.inc();
        throw error;
      }
    };
    await pool.with(async (c) => {
      const incr = `incr ${op.key} ${op.hits}\r\n`;
      const first = await counted(() => c.send(incr, parseLine), stats?.incrementError);
      if (first !== 'NOT_FOUND') {
        stats?.incrementSuccess.inc();
        return;
      }
      stats?.incrementMiss.inc();
      const value = String(op.hits);
      const add = `add ${op.key} 0 ${op.ttlSeconds} ${value.length}\r\n${value}\r\n`;
      const added = await counted(() => c.send(add, parseLine), stats?.addError);
      if (added === 'STORED') {
        stats?.addSuccess.inc();
        return;
      }
      if (added === 'NOT_STORED') stats?.addNotStored.inc();
      else stats?.addError.inc();
      const again = await counted(() => c.send(incr, parseLine), stats?.incrementError);
      if (again === 'NOT_FOUND') stats?.incrementMiss.inc();
      else stats?.incrementSuccess.inc();
    });
  }

  private incrementLater(op: CounterOp): void {
    const previous = this.pending.get(op.key) ?? Promise.resolve();
    const next = previous
      .then(() => this.incrementNow(op))
      .catch(() => {
        // Asynchronous by design: a lost increment only lets a few extra hits through.
      });
    this.pending.set(op.key, next);
    void next.then(() => {
      if (this.pending.get(op.key) === next) this.pending.delete(op.key);
    });
  }

  admit(): Promise<AlgorithmReply[]> {
    // Unreachable: the rules that would need it are refused when they load.
    return Promise.reject(new Error('memcached runs the fixed window only'));
  }

  healthy(): boolean {
    return this.isHealthy;
  }

  onHealthChange(listener: (healthy: boolean) => void): void {
    this.listeners.push(listener);
  }

  async ready(): Promise<boolean> {
    await this.firstLookup;
    const ok = await this.probe();
    if (this.options.healthCheckActiveConnection) this.setHealth(ok);
    return ok;
  }

  /** Idle connections currently kept per node (for tests of MEMSTORE_MAX_IDLE_CONNS). */
  idleConnections(): number[] {
    return this.pools.map((p) => p.idleCount());
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await Promise.allSettled([...this.pending.values()]);
    for (const p of this.pools) p.close();
  }
}
