import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Fleet settings (several proxy instances sharing one cache and one queue in Redis). Parsed from the
 * environment handed over by `loadConfig` (config.ts stays the only module reading `process.env`).
 */

export type StoreKind = 'file' | 'redis';
export type RedisTopology = 'single' | 'sentinel' | 'cluster';

export interface FleetSettings {
  /** CACHE_STORE: where cached answers live. @default 'file' */
  readonly cacheStore: StoreKind;
  /** QUEUE_STORE: where queued mutations live. @default 'file' */
  readonly queueStore: StoreKind;
  /** REDIS_TYPE: single, sentinel or cluster. @default 'single' */
  readonly redisType: RedisTopology;
  /**
   * REDIS_URL: single: `redis://[user:password@]host:port[/db]`; sentinel: `<master name>,<host>:<port>,...`;
   * cluster: `<host>:<port>,<host>:<port>,...`. Required when a store is `redis`.
   */
  readonly redisUrl: string | undefined;
  /** REDIS_PASSWORD for sentinel and cluster nodes (single: in the URL). @default unset */
  readonly redisPassword: string | undefined;
  /** REDIS_KEY_PREFIX: keys are `{<prefix>}:...` (one hash slot, so scripts work on a cluster). @default 'graphql-proxy' */
  readonly redisKeyPrefix: string;
  /** REDIS_TIMEOUT_MS: a Redis command slower than this fails (the proxy answers without Redis). @default 1000 */
  readonly redisTimeoutMs: number;
  /** INSTANCE_ID: this instance's name in the fleet view. @default `<hostname>-<pid>-<4 hex>` */
  readonly instanceId: string;
  /** QUEUE_LEASE_MS: how long the replay lease lasts without renewal (a dead replayer is replaced after it). @default 10000 */
  readonly queueLeaseMs: number;
  /**
   * The in-process copy of recently read Redis cache entries (cache/near-cache.ts), emptied by every
   * invalidation of the fleet: CACHE_NEAR_MAX_BYTES (0: off) @default 16777216 (16 MiB);
   * CACHE_NEAR_MAX_ENTRIES @default 1000; CACHE_NEAR_MAX_AGE_MS, how long a copy is used after it was
   * read @default 1000.
   */
  readonly near: { readonly maxBytes: number; readonly maxEntries: number; readonly maxAgeMs: number };
}

export class FleetSettingError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new FleetSettingError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function store(env: NodeJS.ProcessEnv, name: string): StoreKind {
  const raw = env[name] || 'file';
  if (raw !== 'file' && raw !== 'redis')
    throw new FleetSettingError(`${name} must be file or redis, got "${raw}"`);
  return raw;
}

export function parseFleetSettings(env: NodeJS.ProcessEnv): FleetSettings {
  const cacheStore = store(env, 'CACHE_STORE');
  const queueStore = store(env, 'QUEUE_STORE');
  const redisTypeRaw = env['REDIS_TYPE'] || 'single';
  if (redisTypeRaw !== 'single' && redisTypeRaw !== 'sentinel' && redisTypeRaw !== 'cluster') {
    throw new FleetSettingError(`REDIS_TYPE must be single, sentinel or cluster, got "${redisTypeRaw}"`);
  }
  const redisUrl = env['REDIS_URL'] || undefined;
  if ((cacheStore === 'redis' || queueStore === 'redis') && redisUrl === undefined) {
    throw new FleetSettingError('REDIS_URL is required when CACHE_STORE or QUEUE_STORE is redis');
  }
  if (redisUrl !== undefined && redisTypeRaw === 'single' && !/^rediss?:\/\/[^/]+/.test(redisUrl)) {
    throw new FleetSettingError(`REDIS_URL must be redis://host:port (REDIS_TYPE=single), got "${redisUrl}"`);
  }
  if (redisUrl !== undefined && redisTypeRaw !== 'single') {
    const parts = redisUrl.split(',').map((part) => part.trim());
    const nodes = redisTypeRaw === 'sentinel' ? parts.slice(1) : parts;
    if (nodes.length === 0 || nodes.some((node) => !/^\[?[^\]]*\]?:\d+$/.test(node))) {
      throw new FleetSettingError(
        redisTypeRaw === 'sentinel'
          ? `REDIS_URL must be <master name>,<host>:<port>,... with REDIS_TYPE=sentinel, got "${redisUrl}"`
          : `REDIS_URL must be <host>:<port>,<host>:<port>,... with REDIS_TYPE=cluster, got "${redisUrl}"`,
      );
    }
  }
  const prefix = env['REDIS_KEY_PREFIX'] || 'graphql-proxy';
  if (!/^[\w.:-]{1,100}$/.test(prefix)) {
    throw new FleetSettingError(
      `REDIS_KEY_PREFIX must be 1-100 letters, digits, '.', ':', '_' or '-', got "${prefix}"`,
    );
  }
  const instanceId = env['INSTANCE_ID'] || `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
  if (!/^[\w.:-]{1,100}$/.test(instanceId)) {
    throw new FleetSettingError(
      `INSTANCE_ID must be 1-100 letters, digits, '.', ':', '_' or '-', got "${instanceId}"`,
    );
  }
  return Object.freeze({
    cacheStore,
    queueStore,
    redisType: redisTypeRaw,
    redisUrl,
    redisPassword: env['REDIS_PASSWORD'] || undefined,
    redisKeyPrefix: prefix,
    redisTimeoutMs: integer(env, 'REDIS_TIMEOUT_MS', 1000, 10, 60_000),
    instanceId,
    queueLeaseMs: integer(env, 'QUEUE_LEASE_MS', 10_000, 200, 3_600_000),
    near: Object.freeze({
      maxBytes: integer(env, 'CACHE_NEAR_MAX_BYTES', 16 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
      maxEntries: integer(env, 'CACHE_NEAR_MAX_ENTRIES', 1000, 0, 10_000_000),
      maxAgeMs: integer(env, 'CACHE_NEAR_MAX_AGE_MS', 1000, 0, 3_600_000),
    }),
  });
}
