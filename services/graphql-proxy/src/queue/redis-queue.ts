import { randomUUID } from 'node:crypto';
import type { FleetMessage } from '../fleet/events.js';
import { FleetKeys, type RedisClient } from '../fleet/redis.js';
import { RedisScript } from '../fleet/script.js';
import {
  type AppendResult,
  discardedOutcome,
  type QueueAccess,
  type QueueSummary,
  type RetryResult,
} from './access.js';
import type { QueueOutcome } from './outcomes.js';
import type { QueuedMutation, QueuedPayload } from './store.js';

/**
 * One mutation queue for a fleet of proxies (QUEUE_STORE=redis). Acceptance order is the order of a
 * Redis Stream (`XADD` from any instance); the mutations' state is a hash; the replay is done by one
 * instance at a time under a lease (`SET NX PX`) whose value carries a fencing token from a counter.
 * Every step of a replay is a Lua script that first checks the caller still holds the lease with that
 * token: a replayer that lost its lease (paused, partitioned, replaced after its lease expired) can
 * neither start a send nor record an outcome. Each send is recorded before it is made (`q:sending`,
 * `q:sendlog`), so the next replayer knows a mutation may have reached the upstream and asks the
 * upstream about its idempotency key before sending it (proxy/replay-step.ts).
 *
 * Keys (`{prefix}:q:...`, one cluster slot): `s` stream (field `id`), `i` hash id -> mutation JSON,
 * `sid` hash id -> stream entry id, `seq` counter, `o` hash id -> outcome JSON, `ol` list of outcome
 * ids (newest first, trimmed to QUEUE_OUTCOMES_KEPT), `lease`, `fence`, `sending` hash, `sendlog` list.
 */

// A queued mutation's JSON is stored with `seq` first, prepended by the script that assigns it.
const HEAD = `
local function head()
  local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  if not first then return nil end
  return first[2][2], first[1]
end
`;

// KEYS: s, i, sid, seq, channel. ARGV: id, item JSON without seq (starts with '{'), maxItems, event
const APPEND = new RedisScript(`
${HEAD}
local size = redis.call('XLEN', KEYS[1])
local hid = head()
if hid then
  local text = redis.call('HGET', KEYS[2], hid)
  if text and cjson.decode(text).status == 'rejected' then return {'blocked', text, size} end
end
if size >= tonumber(ARGV[3]) then return {'full', '', size} end
local seq = redis.call('INCR', KEYS[4])
local text = '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2)
local sid = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], text)
redis.call('HSET', KEYS[3], ARGV[1], sid)
redis.call('PUBLISH', KEYS[5], ARGV[4])
return {'queued', text, size + 1}
`);

// KEYS: s, i. Returns the head mutation's JSON or nil.
const HEAD_ITEM = new RedisScript(`
${HEAD}
local hid = head()
if not hid then return false end
return redis.call('HGET', KEYS[2], hid)
`);

// KEYS: s, i. The queue's length and its head mutation's JSON (or false): O(1), whatever the length.
const SUMMARY = new RedisScript(`
${HEAD}
local hid = head()
return {redis.call('XLEN', KEYS[1]), hid and redis.call('HGET', KEYS[2], hid) or false}
`);

// KEYS: lease, fence. ARGV: instance, ttl. Returns the lease value ("<instance>|<token>") or nil.
const ACQUIRE = new RedisScript(`
local current = redis.call('GET', KEYS[1])
if current then
  if string.sub(current, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return current
  end
  return false
end
local value = ARGV[1] .. '|' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return value
`);

// KEYS: lease. ARGV: value, ttl (0: release).
const RENEW = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`);

// KEYS: s, i, lease, sending, sendlog. ARGV: lease value, force, now, at
const BEGIN = new RedisScript(`
${HEAD}
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {'fenced'} end
local id, sid = head()
if not id then return {'empty'} end
local text = redis.call('HGET', KEYS[2], id)
if not text then
  redis.call('XDEL', KEYS[1], sid)
  return {'again'}
end
local item = cjson.decode(text)
if item.status == 'rejected' then return {'rejected', text} end
if ARGV[2] ~= '1' and tonumber(item.nextAttemptAt) > tonumber(ARGV[3]) then return {'backoff', text} end
local previous = redis.call('HGET', KEYS[4], id) or ''
local record = ARGV[1] .. '|' .. ARGV[4]
redis.call('HSET', KEYS[4], id, record)
redis.call('RPUSH', KEYS[5], id .. '|' .. record)
redis.call('LTRIM', KEYS[5], -1000, -1)
return {'send', text, sid, previous}
`);

// Records an outcome and trims the outcome log. Needs KEYS[o], KEYS[ol] at OUT, OUTL.
const RECORD = `
local function record(id, outcome, keep)
  redis.call('HSET', KEYS[OUT], id, outcome)
  redis.call('LREM', KEYS[OUTL], 0, id)
  redis.call('LPUSH', KEYS[OUTL], id)
  while redis.call('LLEN', KEYS[OUTL]) > keep do
    redis.call('HDEL', KEYS[OUT], redis.call('RPOP', KEYS[OUTL]))
  end
end
`;

// KEYS: lease, s, i, sid, sending, o, ol, channel. ARGV: lease value, id, stream id, expected JSON,
// kind (sent|update), new JSON or outcome JSON, keep, event
const FINISH = new RedisScript(`
local OUT, OUTL = 6, 7
${RECORD}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'fenced' end
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[4] then return 'changed' end
redis.call('HDEL', KEYS[5], ARGV[2])
if ARGV[5] == 'sent' then
  redis.call('XDEL', KEYS[2], ARGV[3])
  redis.call('HDEL', KEYS[3], ARGV[2])
  redis.call('HDEL', KEYS[4], ARGV[2])
  record(ARGV[2], ARGV[6], tonumber(ARGV[7]))
else
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[6])
end
redis.call('PUBLISH', KEYS[8], ARGV[8])
return 'ok'
`);

// KEYS: i, channel. ARGV: id, expected JSON, new JSON, event. Compare-and-set of one mutation.
const UPDATE = new RedisScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', KEYS[2], ARGV[4])
return 1
`);

// KEYS: s, i, sid, sending, o, ol, channel. ARGV: id, expected JSON, outcome JSON, keep, event
const DISCARD = new RedisScript(`
local OUT, OUTL = 5, 6
${RECORD}
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
local sid = redis.call('HGET', KEYS[3], ARGV[1])
if sid then redis.call('XDEL', KEYS[1], sid) end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
record(ARGV[1], ARGV[3], tonumber(ARGV[4]))
redis.call('PUBLISH', KEYS[7], ARGV[5])
return 1
`);

/** One step of a replay, as decided atomically in Redis. */
export type ReplayStep =
  | { readonly kind: 'fenced' | 'empty' | 'again' }
  | { readonly kind: 'rejected' | 'backoff'; readonly item: QueuedMutation }
  | {
      readonly kind: 'send';
      readonly item: QueuedMutation;
      readonly text: string;
      readonly streamId: string;
      /**
       * The send a previous lease holder recorded and never finished (`<instance>|<token>|<at>`): it
       * may have reached the upstream, so the replay asks about the key before sending.
       */
      readonly previousSend: string | undefined;
    };

/** How a sent mutation ended, for `finish`. */
export type StepResult =
  | { readonly kind: 'sent'; readonly outcome: QueueOutcome }
  | { readonly kind: 'update'; readonly item: QueuedMutation; readonly event: 'retry' | 'rejected' };

function parse(text: string): QueuedMutation {
  return JSON.parse(text) as QueuedMutation;
}

/** A queued mutation's JSON without `seq` (the append script puts it first). */
function withoutSeq(item: Omit<QueuedMutation, 'seq'>): string {
  return JSON.stringify(item);
}

/** `item` with `seq` first, as the scripts store it (so compare-and-set sees the same text). */
function encode(item: QueuedMutation): string {
  const { seq, ...rest } = item;
  return `{"seq":${seq},${JSON.stringify(rest).slice(1)}`;
}

export class RedisQueue implements QueueAccess {
  private readonly k: FleetKeys;

  constructor(
    private readonly client: RedisClient,
    prefix: string,
    private readonly instanceId: string,
    private readonly outcomesKept: number,
  ) {
    this.k = new FleetKeys(prefix);
  }

  private key(name: string): string {
    return this.k.key(`q:${name}`);
  }

  private event(event: Extract<FleetMessage, { kind: 'queue' }>['event'], id: string, extra = {}): string {
    return JSON.stringify({ kind: 'queue', from: this.instanceId, event, id, ...extra });
  }

  async size(): Promise<number> {
    return this.client.xlen(this.key('s'));
  }

  async summary(): Promise<QueueSummary> {
    const [size, text] = (await SUMMARY.run(this.client, [this.key('s'), this.key('i')], [])) as [
      number,
      string | null,
    ];
    return { size, head: text ? parse(text) : undefined };
  }

  async head(): Promise<QueuedMutation | undefined> {
    const text = (await HEAD_ITEM.run(this.client, [this.key('s'), this.key('i')], [])) as string | null;
    return text ? parse(text) : undefined;
  }

  async blockedBy(): Promise<QueuedMutation | undefined> {
    const head = await this.head();
    return head?.status === 'rejected' ? head : undefined;
  }

  async append(
    payload: QueuedPayload,
    idempotencyKey: string,
    authorization: string | undefined,
    now: number,
    maxItems: number,
    maybeSent = false,
  ): Promise<AppendResult> {
    const id = randomUUID();
    const text = withoutSeq({
      id,
      createdAt: new Date(now).toISOString(),
      payload,
      idempotencyKey,
      ...(authorization ? { authorization } : {}),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      ...(maybeSent ? { maybeSent } : {}),
    });
    const [kind, stored, size] = (await APPEND.run(
      this.client,
      [this.key('s'), this.key('i'), this.key('sid'), this.key('seq'), this.k.key('events')],
      [id, text, Number.isFinite(maxItems) ? maxItems : Number.MAX_SAFE_INTEGER, this.event('queued', id)],
    )) as [string, string, number];
    if (kind === 'blocked') return { kind, by: parse(stored), size };
    if (kind === 'full') return { kind, size };
    return { kind: 'queued', item: parse(stored) };
  }

  async list(): Promise<readonly QueuedMutation[]> {
    const entries = await this.client.xrange(this.key('s'), '-', '+');
    if (entries.length === 0) return [];
    const ids = entries.map(([, fields]) => fields[1] as string);
    const texts = await this.client.hmget(this.key('i'), ...ids);
    return texts.filter((text): text is string => text !== null).map(parse);
  }

  async find(id: string): Promise<{ item: QueuedMutation; position: number } | undefined> {
    const [text, sid] = await this.client
      .hmget(this.key('i'), id)
      .then(async ([found]) => [found, found ? await this.client.hget(this.key('sid'), id) : null]);
    if (!text || !sid) return undefined;
    const before = await this.client.xrange(this.key('s'), '-', sid);
    return { item: parse(text), position: before.length - 1 };
  }

  async outcome(id: string): Promise<QueueOutcome | undefined> {
    const text = await this.client.hget(this.key('o'), id);
    return text ? (JSON.parse(text) as QueueOutcome) : undefined;
  }

  async retry(id: string, now: number): Promise<RetryResult> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const text = await this.client.hget(this.key('i'), id);
      if (!text) return 'not-found';
      const item = parse(text);
      if (item.status !== 'rejected') return 'not-rejected';
      const next = encode({ ...item, status: 'pending', nextAttemptAt: now });
      const done = await UPDATE.run(
        this.client,
        [this.key('i'), this.k.key('events')],
        [id, text, next, this.event('retried', id)],
      );
      if (done === 1) return 'retried';
    }
    return 'not-rejected';
  }

  async discard(id: string, now: number): Promise<QueuedMutation | undefined> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const text = await this.client.hget(this.key('i'), id);
      if (!text) return undefined;
      const item = parse(text);
      const done = await DISCARD.run(
        this.client,
        [
          this.key('s'),
          this.key('i'),
          this.key('sid'),
          this.key('sending'),
          this.key('o'),
          this.key('ol'),
          this.k.key('events'),
        ],
        [
          id,
          text,
          JSON.stringify(discardedOutcome(item, now)),
          this.outcomesKept,
          this.event('discarded', id),
        ],
      );
      if (done === 1) return item;
    }
    return undefined;
  }

  // --- the replay, under the lease ---

  /** Takes (or extends) the replay lease; its value, or undefined when another instance holds it. */
  async acquireLease(ttlMs: number): Promise<string | undefined> {
    const value = (await ACQUIRE.run(
      this.client,
      [this.key('lease'), this.key('fence')],
      [this.instanceId, ttlMs],
    )) as string | null;
    return value ?? undefined;
  }

  /** Extends the lease; false when it is no longer ours. */
  async renewLease(value: string, ttlMs: number): Promise<boolean> {
    return (await RENEW.run(this.client, [this.key('lease')], [value, ttlMs])) === 1;
  }

  async releaseLease(value: string): Promise<void> {
    await RENEW.run(this.client, [this.key('lease')], [value, 0]);
  }

  /** The lease's holder (`<instance>|<token>`), if any. */
  async leaseHolder(): Promise<string | undefined> {
    return (await this.client.get(this.key('lease'))) ?? undefined;
  }

  /** The head of the queue, to send now (the send is recorded), or why not. */
  async begin(lease: string, force: boolean, now: number): Promise<ReplayStep> {
    const [kind, text, sid, previous] = (await BEGIN.run(
      this.client,
      [this.key('s'), this.key('i'), this.key('lease'), this.key('sending'), this.key('sendlog')],
      [lease, force ? '1' : '0', now, new Date(now).toISOString()],
    )) as [string, string?, string?, string?];
    if (kind === 'send') {
      return {
        kind,
        item: parse(text as string),
        text: text as string,
        streamId: sid as string,
        previousSend: previous ? previous : undefined,
      };
    }
    if (kind === 'rejected' || kind === 'backoff') return { kind, item: parse(text as string) };
    return { kind: kind as 'fenced' | 'empty' | 'again' };
  }

  /** Records how a send ended; 'fenced' when the lease was lost, 'changed' when an operator moved it. */
  async finish(
    lease: string,
    step: Extract<ReplayStep, { kind: 'send' }>,
    result: StepResult,
  ): Promise<'ok' | 'fenced' | 'changed'> {
    const id = step.item.id;
    const [kind, value, event] =
      result.kind === 'sent'
        ? [
            'sent',
            JSON.stringify(result.outcome),
            this.event('sent', id, { upstreamStatus: result.outcome.upstreamStatus }),
          ]
        : [
            'update',
            encode(result.item),
            this.event(result.event, id, { message: result.item.lastError?.message }),
          ];
    return (await FINISH.run(
      this.client,
      [
        this.key('lease'),
        this.key('s'),
        this.key('i'),
        this.key('sid'),
        this.key('sending'),
        this.key('o'),
        this.key('ol'),
        this.k.key('events'),
      ],
      [lease, id, step.streamId, step.text, kind, value, this.outcomesKept, event],
    )) as 'ok' | 'fenced' | 'changed';
  }

  /** The last recorded sends, oldest first: `<id>|<instance>|<token>|<at>`. */
  async sendLog(): Promise<string[]> {
    return this.client.lrange(this.key('sendlog'), 0, -1);
  }
}
