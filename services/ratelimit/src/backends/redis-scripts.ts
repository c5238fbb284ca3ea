import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { AlgorithmOp, AlgorithmReply } from './types.js';

/**
 * The sliding-window and token-bucket steps as one Redis script, so a call costs one round trip
 * whatever the algorithm: `EVALSHA` with every op of the call (one key each; a cluster gets one
 * call per key, sent together), and `EVAL` of the source after a `NOSCRIPT` (a restarted or
 * flushed server), which caches it again. The steps are limiter/algorithms/sliding-window.ts and
 * token-bucket.ts line for line; the clock is the caller's `now` (ms), as the fixed window's
 * window start is, so a test can drive it and every instance must keep NTP time.
 *
 * KEYS: one per op. ARGV[1]: now (ms); then 7 per op: algorithm (1 sliding window, 2 token
 * bucket), hits, limit, burst, window ms, sub-windows, extra expiry ms. Reply: per op
 * `{admitted (0|1), values...}`: the n + 1 counted sub-window counts, or the scaled tokens left.
 * Sliding window: a hash `sub-window index -> count` (stale fields dropped as they are met);
 * token bucket: a hash `t` (scaled tokens) and `a` (ms of `t`), dropped when full again.
 */
export const ALGORITHM_SCRIPT = `
local function int(x) return string.format('%d', x) end
local now = tonumber(ARGV[1])
local out = {}
for k = 1, #KEYS do
  local key = KEYS[k]
  local b = 1 + (k - 1) * 7
  local algorithm = tonumber(ARGV[b + 1])
  local hits = tonumber(ARGV[b + 2])
  local limit = tonumber(ARGV[b + 3])
  local burst = tonumber(ARGV[b + 4])
  local window = tonumber(ARGV[b + 5])
  local n = tonumber(ARGV[b + 6])
  local extra = tonumber(ARGV[b + 7])
  if algorithm == 1 then
    local sub = window / n
    local current = math.floor(now / sub)
    local oldest = current - n
    local counts = {}
    for j = 1, n + 1 do counts[j] = 0 end
    local used = 0
    local stale = {}
    local flat = redis.call('HGETALL', key)
    for f = 1, #flat, 2 do
      local index = tonumber(flat[f])
      local count = tonumber(flat[f + 1]) or 0
      if index == nil or index < oldest or count <= 0 then
        stale[#stale + 1] = flat[f]
      else
        local slot = math.min(index, current) - oldest + 1
        counts[slot] = counts[slot] + count
        used = used + count
      end
    end
    if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
    local admitted = 0
    if used + hits <= limit then
      admitted = 1
      if hits > 0 then
        redis.call('HINCRBY', key, int(current), int(hits))
        redis.call('PEXPIRE', key, int(window + sub + extra))
        counts[n + 1] = counts[n + 1] + hits
      end
    end
    local reply = { admitted }
    for j = 1, n + 1 do reply[j + 1] = counts[j] end
    out[k] = reply
  else
    local capacity = burst * window
    local tokens = capacity
    local at = now
    local state = redis.call('HMGET', key, 't', 'a')
    if state[1] then
      local storedAt = tonumber(state[2]) or now
      tokens = math.min(capacity, tonumber(state[1]) + math.max(0, now - storedAt) * limit)
      at = math.max(storedAt, now)
    end
    local admitted = 0
    if hits * window <= tokens then
      admitted = 1
      tokens = tokens - hits * window
    end
    local full = window
    if limit > 0 then full = math.ceil((capacity - tokens) / limit) end
    if full > 0 then
      redis.call('HSET', key, 't', int(tokens), 'a', int(at))
      redis.call('PEXPIRE', key, int(full + extra))
    elseif state[1] then
      redis.call('DEL', key)
    end
    out[k] = { admitted, tokens }
  end
end
return out
`;

export const ALGORITHM_SCRIPT_SHA = createHash('sha1').update(ALGORITHM_SCRIPT).digest('hex');

const ALGORITHM_CODE = { sliding_window: '1', token_bucket: '2' } as const;

/** KEYS and ARGV of one script call (`now` first). */
export function scriptArguments(ops: readonly AlgorithmOp[], nowMs: number): string[] {
  const args = new Array<string>(1 + ops.length * 8);
  for (let i = 0; i < ops.length; i++) args[i] = ops[i]!.key;
  let at = ops.length;
  args[at++] = String(nowMs);
  for (const op of ops) {
    args[at++] = ALGORITHM_CODE[op.algorithm];
    args[at++] = String(op.hits);
    args[at++] = String(op.limit);
    args[at++] = String(op.burst);
    args[at++] = String(op.windowMs);
    args[at++] = String(op.subWindows);
    args[at++] = String(op.jitterMs);
  }
  return args;
}

function parseReply(raw: unknown, expected: number): AlgorithmReply[] {
  if (!Array.isArray(raw) || raw.length !== expected)
    throw new Error('redis: unexpected algorithm script reply');
  return raw.map((entry: unknown) => {
    if (!Array.isArray(entry) || entry.length < 2)
      throw new Error('redis: unexpected algorithm script reply');
    const values = new Array<number>(entry.length - 1);
    for (let i = 1; i < entry.length; i++) values[i - 1] = Number(entry[i]);
    return { admitted: Number(entry[0]) === 1, values };
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

export interface RedisScript {
  readonly source: string;
  readonly sha: string;
}

export function redisScript(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * `EVALSHA` of `script` (queued on the client's socket at once, so it joins a corked write with
 * the caller's other commands); `EVAL` of the source after `NOSCRIPT`, which caches it again.
 * `args` are the keys, then the other arguments.
 */
export async function evalScript(
  client: Redis | Cluster,
  script: RedisScript,
  numKeys: number,
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, numKeys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return await client.eval(script.source, numKeys, ...args);
  }
}

const ALGORITHMS_SCRIPT: RedisScript = { source: ALGORITHM_SCRIPT, sha: ALGORITHM_SCRIPT_SHA };

/** One script call running the algorithm step of every op on `client`. */
export async function runAlgorithmScript(
  client: Redis | Cluster,
  ops: readonly AlgorithmOp[],
  nowMs: number,
): Promise<AlgorithmReply[]> {
  const raw = await evalScript(client, ALGORITHMS_SCRIPT, ops.length, scriptArguments(ops, nowMs));
  return parseReply(raw, ops.length);
}
