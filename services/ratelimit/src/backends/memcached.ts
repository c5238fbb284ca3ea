import { crc32 } from 'node:zlib';
import memjs from 'memjs';
import type { CounterBackend, CounterOp } from './types.js';

/**
 * Memcached counters (reference "Memcached"): read the counts, answer from read + hits, and
 * increment asynchronously, so a client may briefly exceed its quota under simultaneous requests.
 * The binary protocol's increment-with-initial-value creates a missing key atomically with its
 * expiry, which replaces the reference's increment / add / increment-again dance. Keys map to nodes
 * by crc32 % nodes (as gomemcache's ServerList), so every instance must use the identical node list.
 * Within one process, a read waits for this process's pending increments of the same key.
 */
export interface MemcachedBackendOptions {
  /** `MEMSTORE_HOST_PORT`: `host:port,host:port`. */
  hostPorts: string;
  /** Operation timeout in ms. */
  timeoutMs: number;
  /** Probe the nodes every second and report health (KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION). */
  healthCheckActiveConnection: boolean;
}

const MAX_KEY_LENGTH = 250;
// Whitespace and control characters break the memcached protocol.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is rejected
const BAD_KEY = /[\s\x00-\x1f\x7f]/;

export class InvalidMemcachedKeyError extends Error {}

export class MemcachedBackend implements CounterBackend {
  readonly description: string;
  private readonly client: memjs.Client;
  private readonly nodeCount: number;
  private readonly pending = new Map<string, Promise<unknown>>();
  private isHealthy = true;
  private readonly listeners: ((healthy: boolean) => void)[] = [];
  private readonly prober: NodeJS.Timeout | undefined;

  constructor(private readonly options: MemcachedBackendOptions) {
    this.description = `memcached ${options.hostPorts}`;
    const seconds = options.timeoutMs / 1000;
    this.client = memjs.Client.create(options.hostPorts, {
      retries: 0,
      timeout: seconds,
      conntimeout: seconds,
      keepAlive: true,
      logger: { log: () => {} },
    });
    this.nodeCount = this.client.servers.length;
    // Same node choice as the reference's client (crc32 of the key modulo the node count).
    (this.client as unknown as { getServer(key: string): number }).getServer = (key) =>
      crc32(key) % this.nodeCount;
    if (options.healthCheckActiveConnection) {
      this.prober = setInterval(() => void this.probe().then((ok) => this.setHealth(ok)), 1000);
      this.prober.unref();
    }
  }

  private setHealth(ok: boolean): void {
    if (ok === this.isHealthy) return;
    this.isHealthy = ok;
    for (const l of this.listeners) l(ok);
  }

  /** True when every node answers `stats` within the timeout. */
  private probe(): Promise<boolean> {
    return new Promise((resolve) => {
      let answered = 0;
      let failed = false;
      const timer = setTimeout(() => resolve(false), this.options.timeoutMs + 100);
      this.client.stats((error) => {
        if (error) failed = true;
        answered += 1;
        if (answered === this.nodeCount) {
          clearTimeout(timer);
          resolve(!failed);
        }
      });
    });
  }

  private static check(key: string): void {
    if (key.length > MAX_KEY_LENGTH || BAD_KEY.test(key)) {
      throw new InvalidMemcachedKeyError(
        `memcached key longer than ${MAX_KEY_LENGTH} or with whitespace/control characters: ${JSON.stringify(key.slice(0, 60))}`,
      );
    }
  }

  async read(ops: readonly CounterOp[]): Promise<number[]> {
    for (const op of ops) MemcachedBackend.check(op.key);
    const waits = ops.map((op) => this.pending.get(op.key)).filter((p) => p !== undefined);
    if (waits.length > 0) await Promise.allSettled(waits);
    const values = await Promise.all(ops.map((op) => this.client.get(op.key)));
    return values.map(({ value }) => (value === null ? 0 : Number(value.toString('ascii')) || 0));
  }

  async increment(ops: readonly CounterOp[]): Promise<number[]> {
    const current = await this.read(ops);
    const running = new Map<string, number>();
    const after = ops.map((op, i) => {
      const value = (running.get(op.key) ?? current[i]!) + op.hits;
      running.set(op.key, value);
      return value;
    });
    for (const op of ops) if (op.hits > 0) this.incrementLater(op);
    return after;
  }

  private incrementLater(op: CounterOp): void {
    const previous = this.pending.get(op.key) ?? Promise.resolve();
    const next = previous
      .then(() => this.client.increment(op.key, op.hits, { initial: op.hits, expires: op.ttlSeconds }))
      .catch(() => {
        // Asynchronous by design: a lost increment only lets a few extra hits through.
      });
    this.pending.set(op.key, next);
    void next.then(() => {
      if (this.pending.get(op.key) === next) this.pending.delete(op.key);
    });
  }

  healthy(): boolean {
    return this.isHealthy;
  }

  onHealthChange(listener: (healthy: boolean) => void): void {
    this.listeners.push(listener);
  }

  async ready(): Promise<boolean> {
    const ok = await this.probe();
    if (this.options.healthCheckActiveConnection) this.setHealth(ok);
    return ok;
  }

  async close(): Promise<void> {
    clearInterval(this.prober);
    await Promise.allSettled([...this.pending.values()]);
    this.client.close();
  }
}
