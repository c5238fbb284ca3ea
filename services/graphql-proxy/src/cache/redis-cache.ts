import type { Logger } from 'pino';
import type { FleetEvents } from '../fleet/events.js';
import { FleetKeys, type RedisClient } from '../fleet/redis.js';
import { RedisScript } from '../fleet/script.js';
import type { AnswerCache, PurgeSelector } from './answer-cache.js';
import { NearCache, type NearCacheLimits } from './near-cache.js';
import { type CachedAnswer, etagOf } from './response-cache.js';

/**
 * The response cache of a fleet, in Redis (CACHE_STORE=redis). Same keys, scopes, tags, lifetimes
 * and HTTP semantics as the file store; every instance reads and writes the same entries, so a hit
 * on one instance is a hit on all, and a purge or a mutation's invalidation acts on all at once.
 * A lookup is one EVALSHA (entry + invalidation epoch). Entries read recently are also kept in a
 * bounded in-process copy (`NearCache`, CACHE_NEAR_*), which answers hits without the round trip and
 * is emptied by every invalidation and purge of the fleet, announced on the fleet channel with the
 * new epoch, and unused while that channel is not subscribed (see near-cache.ts).
 *
 * Keys (`{prefix}` is a cluster hash tag: one slot, so scripts may touch several keys):
 * - `{prefix}:e:<key>` hash: `b` body, `s` storedAt, `t` tags (JSON), `i` invalidated (0/1), `l` own
 *   lifetime in ms (empty: CACHE_TTL_SECONDS), `g` ETag; expires when it can no longer be served even
 *   stale (lifetime + max(stale-if-error, stale-while-revalidate)).
 * - `{prefix}:t:<tag>` set of keys holding the tag (expires with its longest-lived entry).
 * - `{prefix}:idx` sorted set key -> expiry (ms); `{prefix}:sz` hash key -> body bytes: the bounds
 *   (CACHE_MAX_ENTRIES: the entries closest to expiry go first) and the fleet's size.
 * - `{prefix}:epoch` counter of invalidations and purges; an answer fetched from upstream across an
 *   invalidation (the epoch its lookup saw has changed) is stored as invalidated.
 */

const GET = new RedisScript(`
return {redis.call('HMGET', KEYS[1], 'b', 's', 't', 'i', 'l', 'g'), redis.call('GET', KEYS[2]) or '0'}
`);

// Removes entries past their expiry from the index and the sizes (their hashes expired by themselves).
const CLEAN = `
local function drop(k)
  redis.call('ZREM', KEYS[2], k)
  redis.call('HDEL', KEYS[4], k)
  redis.call('DEL', BASE .. 'e:' .. k)
end
local function clean(now)
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 200)) do drop(k) end
end
`;

// KEYS: entry, idx, epoch, sizes. ARGV: key, body, storedAt, tags, invalidated, ttl, etag, pexpire,
// expiresAt, seenEpoch, maxEntries, size, base, now
const PUT = new RedisScript(`
local BASE = ARGV[13]
${CLEAN}
local inv = ARGV[5]
if ARGV[10] ~= '' and (redis.call('GET', KEYS[3]) or '0') ~= ARGV[10] then inv = '1' end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'b', ARGV[2], 's', ARGV[3], 't', ARGV[4], 'i', inv, 'l', ARGV[6], 'g', ARGV[7])
local ttl = tonumber(ARGV[8])
redis.call('PEXPIRE', KEYS[1], ttl)
for _, tag in ipairs(cjson.decode(ARGV[4])) do
  local tk = BASE .. 't:' .. tag
  redis.call('SADD', tk, ARGV[1])
  if redis.call('PTTL', tk) < ttl then redis.call('PEXPIRE', tk, ttl) end
end
redis.call('ZADD', KEYS[2], ARGV[9], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[12])
clean(ARGV[14])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[11])
if over > 0 then
  for _, k in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do drop(k) end
end
return inv
`);

// KEYS: idx, epoch, channel. ARGV: base, instance, tags...
const INVALIDATE = new RedisScript(`
local BASE = ARGV[1]
local count = 0
local function mark(k)
  local ek = BASE .. 'e:' .. k
  local state = redis.call('HGET', ek, 'i')
  if state == '0' then
    redis.call('HSET', ek, 'i', '1')
    count = count + 1
  end
  return state ~= false
end
local all = false
for i = 3, #ARGV do if ARGV[i] == '*' then all = true end end
if all then
  for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do mark(k) end
else
  for i = 3, #ARGV do
    local tk = BASE .. 't:' .. ARGV[i]
    for _, k in ipairs(redis.call('SMEMBERS', tk)) do
      if not mark(k) then redis.call('SREM', tk, k) end
    end
  end
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', KEYS[3], cjson.encode({kind = 'cache', from = ARGV[2], epoch = epoch}))
return {count, epoch}
`);

// KEYS: entry-of-key-or-unused, idx, epoch, sizes, channel. ARGV: base, instance, mode, a, b
const PURGE = new RedisScript(`
local BASE = ARGV[1]
local victims
if ARGV[3] == 'all' then
  victims = redis.call('ZRANGE', KEYS[2], 0, -1)
elseif ARGV[3] == 'key' then
  victims = {ARGV[4]}
elseif ARGV[5] ~= '' then
  victims = redis.call('SINTER', BASE .. 't:' .. ARGV[4], BASE .. 't:id:' .. ARGV[5])
else
  victims = redis.call('SMEMBERS', BASE .. 't:' .. ARGV[4])
end
local count = 0
for _, k in ipairs(victims) do
  count = count + redis.call('DEL', BASE .. 'e:' .. k)
  redis.call('ZREM', KEYS[2], k)
  redis.call('HDEL', KEYS[4], k)
end
local epoch = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', KEYS[5], cjson.encode({kind = 'cache', from = ARGV[2], epoch = epoch}))
return {count, epoch}
`);

// KEYS: unused, idx, unused, sizes. ARGV: base, now
const SIZES = new RedisScript(`
local BASE = ARGV[1]
${CLEAN}
clean(ARGV[2])
local bytes = 0
for _, v in ipairs(redis.call('HVALS', KEYS[4])) do bytes = bytes + tonumber(v) end
return {redis.call('ZCARD', KEYS[2]), bytes}
`);

export interface RedisCacheOptions {
  readonly client: RedisClient;
  readonly events: FleetEvents | undefined;
  readonly prefix: string;
  readonly instanceId: string;
  readonly maxEntries: number;
  /** CACHE_TTL_SECONDS in ms: an entry's lifetime when it has none of its own. */
  readonly defaultTtlMs: number;
  /** How long past its lifetime an entry may still be served (stale-if-error, stale-while-revalidate). */
  readonly staleMs: number;
  readonly clock: () => number;
  readonly logger: Logger;
  /** The in-process copy of recent reads; absent or maxBytes 0: every lookup asks Redis. */
  readonly near?: NearCacheLimits;
}

type Fields = [Buffer | null, Buffer | null, Buffer | null, Buffer | null, Buffer | null, Buffer | null];

export class RedisResponseCache implements AnswerCache {
  readonly shared = true;
  private localEpoch = 0;
  /** The Redis epoch each key's last lookup saw (bounded: cleared when large). */
  private readonly seenEpochs = new Map<string, string>();
  /** An invalidation that could not reach Redis: everything is invalidated once it is back. */
  private owedInvalidation = false;
  private readonly keys: FleetKeys;
  private readonly idx: string;
  private readonly epochKey: string;
  private readonly sizesKey: string;
  private readonly channel: string;
  private readonly near: NearCache;
  /** Moves at every change of the fleet channel's link: an epoch read for an older link is not used. */
  private link = 0;

  constructor(private readonly options: RedisCacheOptions) {
    this.near = new NearCache(options.near ?? { maxEntries: 0, maxBytes: 0, maxAgeMs: 0 });
    this.keys = new FleetKeys(options.prefix);
    this.idx = this.keys.key('idx');
    this.epochKey = this.keys.key('epoch');
    this.sizesKey = this.keys.key('sz');
    this.channel = this.keys.key('events');
    options.events?.on((message) => {
      if (message.kind !== 'cache') return;
      this.localEpoch += 1;
      this.near.invalidated(typeof message.epoch === 'number' ? message.epoch : undefined);
    });
    options.events?.onLink((subscribed) => {
      if (subscribed) void this.resumeNear();
      else {
        this.link += 1;
        this.near.suspend();
      }
    });
    options.client.on('ready', () => {
      if (this.owedInvalidation) void this.invalidate(new Set(['*']));
      // Subscribed while commands could not be sent: the epoch is read now.
      if (options.events?.subscribed && !this.near.enabled) void this.resumeNear();
    });
  }

  /** The channel is subscribed (again): the near copy is used from the epoch Redis has now. */
  private async resumeNear(): Promise<void> {
    if (this.options.near === undefined || this.options.near.maxBytes <= 0) return;
    this.link += 1;
    const link = this.link;
    this.near.suspend();
    try {
      const epoch = Number((await this.options.client.get(this.epochKey)) ?? '0');
      // The subscription may have dropped (and come back) while the epoch was read: announcements
      // may have been lost after this epoch, so only the newest link's reading counts.
      if (link === this.link && this.options.events?.subscribed) this.near.resume(epoch);
    } catch (error) {
      this.options.logger.debug({ err: error }, 'could not read the cache epoch; near copy unused');
    }
  }

  /** Entries held in the in-process copy (tests, diagnostics). */
  get nearEntries(): number {
    return this.near.size;
  }

  /** True when an invalidation is owed to Redis (it was down when a mutation succeeded). */
  get invalidationOwed(): boolean {
    return this.owedInvalidation;
  }

  get epoch(): number {
    return this.localEpoch;
  }

  /** The near copy's entry, when read recently and nothing was invalidated since (else undefined). */
  peek(key: string): CachedAnswer | undefined {
    return this.near.get(key, this.options.clock());
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    let reply: [Fields, Buffer];
    try {
      // Buffers: the body goes to the socket as it came from Redis, never decoded to a string.
      reply = (await GET.runBuffer(this.options.client, [this.keys.key(`e:${key}`), this.epochKey], [])) as [
        Fields,
        Buffer,
      ];
    } catch (error) {
      this.options.logger.debug({ err: error }, 'cache lookup failed (Redis unavailable): a miss');
      return undefined;
    }
    const [[body, storedAt, tags, invalidated, ttl, etag], epoch] = reply;
    const epochText = epoch.toString();
    if (this.seenEpochs.size > 10_000) this.seenEpochs.clear();
    this.seenEpochs.set(key, epochText);
    if (body === null || storedAt === null || tags === null) return undefined;
    let tagList: string[];
    try {
      tagList = JSON.parse(tags.toString()) as string[];
    } catch {
      return undefined;
    }
    const answer: CachedAnswer = {
      key,
      storedAt: Number(storedAt.toString()),
      tags: tagList,
      invalidated: invalidated !== null && invalidated.length === 1 && invalidated[0] === 0x31, // '1'
      ttlMs: ttl && ttl.length > 0 ? Number(ttl.toString()) : undefined,
      etag: etag && etag.length > 0 ? etag.toString() : etagOf(body),
      size: body.length,
      body,
    };
    // Only an entry that can answer as fresh is worth a copy (the handler checks freshness again).
    const now = this.options.clock();
    if (now - answer.storedAt < (answer.ttlMs ?? this.options.defaultTtlMs)) {
      this.near.offer(answer, Number(epochText), now);
    }
    return answer;
  }

  async put(
    key: string,
    body: string,
    tags: readonly string[],
    now: number,
    invalidated = false,
    ttlMs?: number,
  ): Promise<void> {
    this.near.forget(key);
    const lifetime = (ttlMs ?? this.options.defaultTtlMs) + this.options.staleMs + 1000;
    const size = Buffer.byteLength(body);
    try {
      await PUT.run(
        this.options.client,
        [this.keys.key(`e:${key}`), this.idx, this.epochKey, this.sizesKey],
        [
          key,
          body,
          now,
          JSON.stringify(tags),
          invalidated ? '1' : '0',
          ttlMs === undefined ? '' : ttlMs,
          etagOf(body),
          lifetime,
          this.options.clock() + lifetime,
          this.seenEpochs.get(key) ?? '',
          this.options.maxEntries,
          size,
          this.keys.base,
          this.options.clock(),
        ],
      );
    } catch (error) {
      this.options.logger.warn({ err: error, cacheKey: key }, 'could not store a cache entry in Redis');
    }
  }

  async invalidate(mutationTags: ReadonlySet<string>): Promise<number> {
    this.localEpoch += 1;
    this.near.invalidated();
    try {
      const tags = this.owedInvalidation ? ['*'] : [...mutationTags];
      const [count, epoch] = (await INVALIDATE.run(
        this.options.client,
        [this.idx, this.epochKey, this.channel],
        [this.keys.base, this.options.instanceId, ...tags],
      )) as [number, number];
      // Lookups answered between the clear above and the invalidation in Redis read the old epoch.
      this.near.invalidated(epoch);
      this.owedInvalidation = false;
      return count;
    } catch (error) {
      // Entries another instance could still serve as fresh: once Redis is back, all are invalidated.
      this.owedInvalidation = true;
      this.options.logger.error(
        { err: error },
        'could not invalidate cached answers in Redis; owed until it is back',
      );
      return 0;
    }
  }

  /** Throws when Redis cannot be reached (the purge API answers 503). */
  async purgeBy(selector: PurgeSelector): Promise<number> {
    this.localEpoch += 1;
    this.near.invalidated();
    const [mode, a, b] =
      selector.kind === 'all'
        ? ['all', '', '']
        : selector.kind === 'key'
          ? ['key', selector.key, '']
          : ['type', selector.type, selector.id ?? ''];
    const [count, epoch] = (await PURGE.run(
      this.options.client,
      [this.keys.key(`e:${a}`), this.idx, this.epochKey, this.sizesKey, this.channel],
      [this.keys.base, this.options.instanceId, mode, a, b],
    )) as [number, number];
    this.near.invalidated(epoch);
    return count;
  }

  async sizes(): Promise<{ entries: number; bytes: number }> {
    const [entries, bytes] = (await SIZES.run(
      this.options.client,
      [this.keys.key('unused'), this.idx, this.keys.key('unused'), this.sizesKey],
      [this.keys.base, this.options.clock()],
    )) as [number, number];
    return { entries, bytes };
  }
}
