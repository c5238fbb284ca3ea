import type { Cluster, Redis } from 'ioredis';
import type { CounterBackend, CounterOp } from './types.js';

/**
 * Redis counters (reference "Limits, keys and counting"): per op `INCRBY key hits` then
 * `EXPIRE key ttl`, all ops of one call in one pipeline (one write, one read). Connections form a
 * pool of KVSTORE_POOL_SIZE clients used round-robin; each is one multiplexed ioredis connection.
 */
export type RedisClient = Pick<
  Redis | Cluster,
  'pipeline' | 'status' | 'on' | 'connect' | 'quit' | 'disconnect'
>;

export interface RedisBackendOptions {
  description: string;
  clients: readonly RedisClient[];
  /** Track connection state for health (KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION). @default false */
  healthCheckActiveConnection: boolean;
  /** Bounded wait for `ready()`. */
  connectTimeoutMs: number;
  /**
   * Cluster mode: a pipeline may only hold keys of one slot, so each op gets its own INCRBY+EXPIRE
   * pipeline, all sent at once (one round trip in parallel, not one write). @default false
   */
  pipelinePerKey?: boolean;
}

export class RedisBackend implements CounterBackend {
  readonly description: string;
  private readonly clients: readonly RedisClient[];
  private next = 0;
  private isHealthy = true;
  private readonly listeners: ((healthy: boolean) => void)[] = [];
  private readonly connecting: Promise<unknown>;

  constructor(private readonly options: RedisBackendOptions) {
    this.description = options.description;
    this.clients = options.clients;
    for (const client of this.clients) {
      client.on('ready', () => this.updateHealth());
      client.on('close', () => this.updateHealth());
      client.on('end', () => this.updateHealth());
      // ioredis reports connection errors as events; without a listener they would be unhandled.
      client.on('error', () => this.updateHealth());
    }
    this.connecting = Promise.allSettled(this.clients.map((c) => c.connect()));
  }

  private client(): RedisClient {
    const c = this.clients[this.next]!;
    this.next = (this.next + 1) % this.clients.length;
    return c;
  }

  private updateHealth(): void {
    if (!this.options.healthCheckActiveConnection) return;
    const now = this.clients.every((c) => c.status === 'ready');
    if (now === this.isHealthy) return;
    this.isHealthy = now;
    for (const l of this.listeners) l(now);
  }

  async increment(ops: readonly CounterOp[]): Promise<number[]> {
    if (ops.length === 0) return [];
    if (this.options.pipelinePerKey && ops.length > 1) {
      const client = this.client();
      return Promise.all(ops.map((op) => this.incrementOn(client, [op]).then((r) => r[0]!)));
    }
    return this.incrementOn(this.client(), ops);
  }

  private async incrementOn(client: RedisClient, ops: readonly CounterOp[]): Promise<number[]> {
    const pipeline = client.pipeline();
    for (const op of ops) {
      pipeline.incrby(op.key, op.hits);
      pipeline.expire(op.key, op.ttlSeconds);
    }
    const results = await pipeline.exec();
    if (!results) throw new Error('redis pipeline returned no results');
    const out = new Array<number>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const [error, value] = results[i * 2]!;
      if (error) throw error;
      const expireError = results[i * 2 + 1]![0];
      if (expireError) throw expireError;
      out[i] = Number(value);
    }
    return out;
  }

  async read(ops: readonly CounterOp[]): Promise<number[]> {
    if (ops.length === 0) return [];
    if (this.options.pipelinePerKey && ops.length > 1) {
      const client = this.client();
      return Promise.all(ops.map((op) => this.readOn(client, [op]).then((r) => r[0]!)));
    }
    return this.readOn(this.client(), ops);
  }

  private async readOn(client: RedisClient, ops: readonly CounterOp[]): Promise<number[]> {
    const pipeline = client.pipeline();
    for (const op of ops) pipeline.get(op.key);
    const results = await pipeline.exec();
    if (!results) throw new Error('redis pipeline returned no results');
    return results.map(([error, value]) => {
      if (error) throw error;
      return value === null ? 0 : Number(value);
    });
  }

  healthy(): boolean {
    return this.isHealthy;
  }

  onHealthChange(listener: (healthy: boolean) => void): void {
    this.listeners.push(listener);
  }

  async ready(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.connectTimeoutMs);
    });
    await Promise.race([this.connecting, timeout]);
    clearTimeout(timer);
    this.updateHealth();
    return this.clients.every((c) => c.status === 'ready');
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      this.clients.map((c) => (c.status === 'ready' ? c.quit() : Promise.resolve(c.disconnect()))),
    );
  }
}
