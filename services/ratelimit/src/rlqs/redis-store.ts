import type { Cluster, Redis } from 'ioredis';
import { evalScript, redisScript } from '../backends/redis-scripts.js';
import type { QuotaState } from './assignment.js';
import { windowStartMs } from './assignment.js';
import type { QuotaReport, QuotaStore } from './store.js';

/**
 * The RLQS state in Redis (single, sentinel or cluster: the main KVSTORE_* endpoint), so that
 * several RLQS servers compute the same shares. Per rule counter two keys under one hash tag:
 * `<key>p`, a sorted set of participants scored by their last report (ms; members older than the
 * assignment TTL are dropped when another member reports, the set expires after two TTLs without
 * a report),
 * and `<key>u<window s>_<window start ms>`, the window's reported usage (expires a minute after
 * its window). One script call per report (in chunks of 500 counters, written together); a
 * cluster gets one call per counter, all sent at once. The clock is the caller's.
 */
const QUOTA_SCRIPT = redisScript(`
local function int(x) return string.format('%d', x) end
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local out = {}
for e = 1, #KEYS / 2 do
  local participants = KEYS[2 * e - 1]
  local usage = KEYS[2 * e]
  local b = 2 + (e - 1) * 4
  local member = ARGV[b + 1]
  local allowed = tonumber(ARGV[b + 2])
  local windowEnd = tonumber(ARGV[b + 3])
  local leave = ARGV[b + 4] == '1'
  if leave then
    redis.call('ZREM', participants, member)
  else
    redis.call('ZADD', participants, now, member)
    redis.call('PEXPIRE', participants, int(ttl * 2))
  end
  local n = redis.call('ZCARD', participants)
  if n > 1 or (leave and n > 0) then
    -- Others take part: drop those not heard of for the TTL (a lone member is the caller itself).
    n = n - redis.call('ZREMRANGEBYSCORE', participants, '-inf', '(' .. int(now - ttl))
  end
  local used
  if allowed > 0 and not leave then
    used = redis.call('INCRBY', usage, int(allowed))
    redis.call('PEXPIRE', usage, int(windowEnd - now + 60000))
  else
    used = tonumber(redis.call('GET', usage) or '0')
  end
  out[e] = { n, used }
end
return out
`);

const CHUNK = 500;

export class RedisQuotaStore implements QuotaStore {
  readonly description: string;
  /** Connected on the first report: a server no Envoy streams to keeps no connection for it. */
  private connecting: Promise<unknown> | undefined;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly ttlMs: number,
    private readonly cluster: boolean,
    description: string,
  ) {
    this.description = `quota state in ${description}`;
    // Connection errors are reported by the calls that fail; without a listener they would be unhandled.
    client.on('error', () => {});
  }

  private args(reports: readonly QuotaReport[], nowMs: number): (string | number)[] {
    const keys: string[] = [];
    const rest: (string | number)[] = [nowMs, this.ttlMs];
    for (const r of reports) {
      const start = windowStartMs(nowMs, r.windowSeconds);
      keys.push(`${r.key}p`, `${r.key}u${r.windowSeconds}_${start}`);
      rest.push(r.member, r.allowed, start + r.windowSeconds * 1000, r.leave ? '1' : '0');
    }
    return [...keys, ...rest];
  }

  private async call(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]> {
    const raw = await evalScript(this.client, QUOTA_SCRIPT, reports.length * 2, this.args(reports, nowMs));
    if (!Array.isArray(raw) || raw.length !== reports.length)
      throw new Error('redis: unexpected quota script reply');
    return raw.map((pair: unknown) => {
      const [n, used] = pair as [number, number];
      return { participants: Number(n), usage: Number(used) };
    });
  }

  async report(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]> {
    if (reports.length === 0) return [];
    this.connecting ??= this.client.connect().catch(() => {});
    await this.connecting;
    if (this.cluster) return (await Promise.all(reports.map((r) => this.call([r], nowMs)))).flat();
    if (reports.length <= CHUNK) return this.call(reports, nowMs);
    const calls: Promise<QuotaState[]>[] = [];
    for (let i = 0; i < reports.length; i += CHUNK) calls.push(this.call(reports.slice(i, i + CHUNK), nowMs));
    return (await Promise.all(calls)).flat();
  }

  async close(): Promise<void> {
    if (!this.connecting) return;
    await this.connecting;
    if (this.client.status === 'ready') await this.client.quit().catch(() => {});
    else this.client.disconnect();
  }
}
