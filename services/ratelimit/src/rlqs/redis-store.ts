import type { Cluster, Redis } from 'ioredis';
import { evalScript, redisScript } from '../backends/redis-scripts.js';
import type { QuotaState } from './assignment.js';
import type { QuotaReport, QuotaStore } from './store.js';

/**
 * The RLQS state in Redis (single, sentinel or cluster: the main KVSTORE_* endpoint), so that
 * several RLQS servers compute the same shares. Per rule counter two keys under one hash tag:
 * `<key>p`, a sorted set of participants scored by their last report (ms; members older than the
 * assignment TTL are dropped when another member reports, the set expires after two TTLs without
 * a report), and `<key>u<window s>_<window start ms>`, the window's reported usage (given its
 * expiry, a minute after its window, when it is created). One script call per report (in chunks
 * of 500 counters, written together; small reports of one turn of the event loop share one call); a cluster gets one call per counter, sent at once (written
 * per node together: auto-pipelining). The clock is the caller's.
 *
 * Per counter the script makes 4 calls when it has one participant (ZADD, PEXPIRE, ZCARD, INCRBY
 * or GET), one more to drop stale participants when it has several, one more when the window's
 * usage key is created. Each counter is one declared key, its hash-tagged name (the two keys
 * above are that name and a suffix: same slot); what the script needs per counter besides, the
 * participant, allowed (-1: it leaves) and the window in seconds, comes in one argument for the
 * whole call, space-separated (participant names hold no space). The reply is flat
 * (participants, usage, participants, usage, ...). Five arguments per counter had made the
 * client's encoding of the command (ioredis: a length and a copy per argument) cost more than
 * the script.
 */
const QUOTA_SCRIPT = redisScript(`
local call = redis.call
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local stale = '(' .. string.format('%d', now - ttl)
local keep = string.format('%d', ttl * 2)
-- Per window length: the usage key's suffix and its expiry (the same for every counter of a call).
local windows = {}
local out = {}
local e = 0
for member, allowedText, windowText in string.gmatch(ARGV[3], '(%S+) (%S+) (%S+)') do
  e = e + 1
  local base = KEYS[e]
  local participants = base .. 'p'
  local allowed = tonumber(allowedText)
  local win = windows[windowText]
  if win == nil then
    local w = tonumber(windowText) * 1000
    local start = math.floor(now / w) * w
    win = { 'u' .. windowText .. '_' .. string.format('%d', start), string.format('%d', start + w - now + 60000) }
    windows[windowText] = win
  end
  local n
  if allowed < 0 then
    call('ZREM', participants, member)
    n = call('ZCARD', participants)
    if n > 0 then n = n - call('ZREMRANGEBYSCORE', participants, '-inf', stale) end
  else
    call('ZADD', participants, ARGV[1], member)
    call('PEXPIRE', participants, keep)
    n = call('ZCARD', participants)
    -- Others take part: drop those not heard of for the TTL (a lone member is the caller itself).
    if n > 1 then n = n - call('ZREMRANGEBYSCORE', participants, '-inf', stale) end
  end
  local usage = base .. win[1]
  local used
  if allowed > 0 then
    used = call('INCRBY', usage, allowedText)
    if used == allowed then call('PEXPIRE', usage, win[2]) end
  else
    used = tonumber(call('GET', usage) or '0')
  end
  out[2 * e - 1] = n
  out[2 * e] = used
end
return out
`);

const CHUNK = 500;

interface Batch {
  count: number;
  readonly parts: {
    readonly reports: readonly QuotaReport[];
    resolve(states: QuotaState[]): void;
    reject(error: unknown): void;
  }[];
}

export class RedisQuotaStore implements QuotaStore {
  readonly description: string;
  /** Connected on the first report: a server no Envoy streams to keeps no connection for it. */
  private connecting: Promise<unknown> | undefined;
  /** Small reports waiting for the end of this turn of the event loop, by clock reading. */
  private readonly pending = new Map<number, Batch>();
  private flushScheduled = false;

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
    const n = reports.length;
    const args = new Array<string | number>(n + 3);
    let packed = '';
    for (let i = 0; i < n; i++) {
      const r = reports[i]!;
      args[i] = r.key;
      packed += `${r.member} ${r.leave ? -1 : r.allowed} ${r.windowSeconds} `;
    }
    args[n] = nowMs;
    args[n + 1] = this.ttlMs;
    args[n + 2] = packed;
    return args;
  }

  private async call(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]> {
    const raw = await evalScript(this.client, QUOTA_SCRIPT, reports.length, this.args(reports, nowMs));
    if (!Array.isArray(raw) || raw.length !== reports.length * 2)
      throw new Error('redis: unexpected quota script reply');
    const out = new Array<QuotaState>(reports.length);
    for (let i = 0; i < reports.length; i++)
      out[i] = { participants: Number(raw[2 * i]), usage: Number(raw[2 * i + 1]) };
    return out;
  }

  async report(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]> {
    if (reports.length === 0) return [];
    this.connecting ??= this.client.connect().catch(() => {});
    await this.connecting;
    if (this.cluster) return (await Promise.all(reports.map((r) => this.call([r], nowMs)))).flat();
    if (reports.length >= CHUNK) {
      const calls: Promise<QuotaState[]>[] = [];
      for (let i = 0; i < reports.length; i += CHUNK)
        calls.push(this.call(reports.slice(i, i + CHUNK), nowMs));
      return (await Promise.all(calls)).flat();
    }
    return this.batched(reports, nowMs);
  }

  /**
   * Small reports of one turn of the event loop (every stream whose report was read at once) with
   * the same clock reading share one script call, up to CHUNK counters: the call's fixed cost in
   * Redis (about as much as ten counters' work) and a round trip paid once for them.
   */
  private batched(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]> {
    return new Promise((resolve, reject) => {
      let batch = this.pending.get(nowMs);
      if (batch === undefined || batch.count + reports.length > CHUNK) {
        if (batch !== undefined) this.flush(nowMs, batch);
        batch = { count: 0, parts: [] };
        this.pending.set(nowMs, batch);
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          setImmediate(() => this.flushAll());
        }
      }
      batch.count += reports.length;
      batch.parts.push({ reports, resolve, reject });
    });
  }

  private flushAll(): void {
    this.flushScheduled = false;
    const pending = [...this.pending];
    this.pending.clear();
    for (const [nowMs, batch] of pending) this.flush(nowMs, batch);
  }

  private flush(nowMs: number, batch: Batch): void {
    if (this.pending.get(nowMs) === batch) this.pending.delete(nowMs);
    const all = batch.parts.length === 1 ? batch.parts[0]!.reports : batch.parts.flatMap((p) => p.reports);
    this.call(all, nowMs).then(
      (states) => {
        let at = 0;
        for (const part of batch.parts) {
          part.resolve(states.slice(at, at + part.reports.length));
          at += part.reports.length;
        }
      },
      (error: unknown) => {
        for (const part of batch.parts) part.reject(error);
      },
    );
  }

  async close(): Promise<void> {
    if (!this.connecting) return;
    await this.connecting;
    if (this.client.status === 'ready') await this.client.quit().catch(() => {});
    else this.client.disconnect();
  }
}
