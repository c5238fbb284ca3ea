import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { RepeatedErrorLog } from '../logging/repeated-error.js';
import type { RateLimitConfig } from '../rules/config-tree.js';
import { domainNotFoundCounters, ruleStatsCache } from '../rules/rule-stats.js';
import type { FailureMode } from '../settings/backend.js';
import type { Counter, Gauge, StatsRegistry, Timer } from '../stats/registry.js';
import { type Assignment, assignmentFor, countReport, type QuotaState, sameStrategy } from './assignment.js';
import type { BucketAction, BucketUsage, Strategy, UsageReports } from './protos.js';
import type { RlqsSettings } from './settings.js';
import type { QuotaReport, QuotaStore } from './store.js';
import { bucketKey, type MatchContext, rematch, type TrackedBucket, windowEndMs } from './tracked-bucket.js';

/**
 * The Rate Limit Quota Service (`StreamRateLimitQuotas`, Envoy's RLQS): for every report of a
 * stream, the buckets' rules (bucket-mapping.ts), the shared state of each rule counter in the
 * configured backend (store.ts: who takes part, the window's usage), and an answer holding an
 * assignment for every bucket reported (assignment.ts), at once. Besides the answers it pushes:
 * new shares to this server's other streams of a counter when a participant joins or leaves, the
 * window cap's DENY_ALL to them when it is reached and its lifting when the window ends, the
 * changed assignments after a rules reload, and AbandonAction for a bucket a stream reported no
 * request for during RLQS_ABANDON_AFTER_S. Streams of other servers on the same Redis see joins,
 * leaves and the cap at their next report (within Envoy's 5 s). The transport is a sink
 * (rlqs/grpc.ts), so this class holds no gRPC.
 */
export interface QuotaStreamSink {
  send(actions: readonly BucketAction[]): void;
  /** Ends the stream with a gRPC status code and message. */
  fail(code: number, message: string): void;
  /** Ends the stream with status OK (the server is stopping). */
  end(): void;
}

export interface QuotaServiceOptions {
  readonly settings: RlqsSettings;
  readonly store: QuotaStore;
  readonly currentConfig: () => RateLimitConfig | undefined;
  readonly registry: StatsRegistry;
  readonly logger: Logger;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly cacheKeyPrefix: string;
  readonly nearLimitRatio: number;
  readonly globalShadowMode: boolean;
  /** What a report is answered when the backend fails: `error` answers nothing (Envoy keeps its assignments until their TTL). */
  readonly failureMode: FailureMode;
  /** Sweep period (window ends, abandoned buckets). @default 1000 */
  readonly sweepIntervalMs?: number;
}

const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;

/** Buckets of a report prepared (and sent to the backend) between two turns of the event loop. */
const REPORT_CHUNK = 500;
/**
 * A report's count is read as at most this (2^32, above any `requests_per_unit`, a uint32): the
 * decision is the same (the limit is reached either way), and the shared counter cannot overflow
 * Redis' int64 (`num_requests_allowed` is a uint64: 2^64 - 1 made `INCRBY` fail for every bucket
 * of the report's piece, so none was answered).
 */
const MAX_REPORTED_COUNT = 2 ** 32;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A service instance among the servers sharing a backend: 10 random base-36 characters (each
 * stream's number follows; participant names stay short: the shared state stores one per bucket).
 */
const instanceId = (): string => randomBytes(8).readBigUInt64BE().toString(36).padStart(13, '0').slice(0, 10);

/** A stream's bucket, holding its stream (no server-wide map from bucket to stream). */
interface OwnedBucket extends TrackedBucket {
  readonly stream: Stream;
  /** The last report (`reportMark`) that held this bucket. */
  reportMark: number;
}

interface Stream {
  /** `<server id><stream number>`, both base 36: unique across the servers sharing a backend. */
  readonly id: string;
  readonly sink: QuotaStreamSink;
  /** By canonical key (bucket-mapping's `bucketKey`). */
  readonly buckets: Map<string, OwnedBucket>;
  /** By the bytes of the id as Envoy sent it (`BucketUsage.wireId`). */
  readonly byWire: Map<string, OwnedBucket>;
  /** The next bucket's number on this stream (its participant name in the shared state). */
  seq: number;
  /** New counter states of this stream's buckets from other streams' reports, sent together. */
  readonly pushes: Map<OwnedBucket, { counterKey: string; state: QuotaState; at: number }>;
  pushScheduled: boolean;
  /** Work on this stream runs one piece at a time, in order (reports, pushes, sweeps, reload). */
  queue: Promise<void>;
  closed: boolean;
}

interface Stats {
  readonly reports: Counter;
  readonly responseTime: Timer;
  readonly streams: Gauge;
  readonly streamsTotal: Counter;
  readonly buckets: Gauge;
  readonly sent: Record<Strategy['kind'], Counter>;
  readonly abandoned: Counter;
  /** Streams refused or closed by RLQS_MAX_STREAMS or RLQS_MAX_BUCKETS. */
  readonly overCapacity: Counter;
  readonly backendErrors: Counter;
  readonly globalShadow: Counter;
}

export class RateLimitQuotaService {
  private readonly streams = new Set<Stream>();
  /**
   * Rule counter -> this server's participants of it (for pushes): the one bucket, or a set when
   * several (most counters have one participant here: no set for them).
   */
  private readonly byCounter = new Map<string, OwnedBucket | Set<OwnedBucket>>();
  private readonly stats: Stats;
  private readonly matchContext: MatchContext;
  private readonly sweeper: NodeJS.Timeout;
  private bucketCount = 0;
  private streamSeq = 0;
  /** Numbers the reports for `hasRepeat`. */
  private reportMark = 0;
  private readonly instanceId = instanceId();

  private readonly backendErrorLog: RepeatedErrorLog;

  constructor(private readonly options: QuotaServiceOptions) {
    const r = options.registry;
    this.backendErrorLog = new RepeatedErrorLog(options.logger, 'rlqs: quota state backend call failed');
    this.stats = {
      reports: r.counter('ratelimit_server.StreamRateLimitQuotas.total_requests'),
      responseTime: r.timer('ratelimit_server.StreamRateLimitQuotas.response_time'),
      streams: r.gauge('ratelimit.rlqs.streams'),
      streamsTotal: r.counter('ratelimit.rlqs.streams_total'),
      buckets: r.gauge('ratelimit.rlqs.buckets'),
      sent: {
        allow_all: r.counter('ratelimit.rlqs.assignments.allow_all'),
        deny_all: r.counter('ratelimit.rlqs.assignments.deny_all'),
        token_bucket: r.counter('ratelimit.rlqs.assignments.token_bucket'),
      },
      abandoned: r.counter('ratelimit.rlqs.abandoned'),
      overCapacity: r.counter('ratelimit.rlqs.over_capacity'),
      backendErrors: r.counter('ratelimit.rlqs.backend_error'),
      globalShadow: r.counter('ratelimit.service.global_shadow_mode'),
    };
    const domainNotFound = domainNotFoundCounters(r);
    this.matchContext = {
      cacheKeyPrefix: options.cacheKeyPrefix,
      globalShadowMode: options.globalShadowMode,
      statsFor: ruleStatsCache(r),
      domainNotFound: (domain) => domainNotFound(domain).inc(),
    };
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 1000);
    this.sweeper.unref();
  }

  /** A new stream; the transport calls `report` for each message and `end` when it closes. */
  open(sink: QuotaStreamSink): { report(reports: UsageReports): void; end(): Promise<void> } {
    if (this.streams.size >= this.options.settings.maxStreams) {
      this.stats.overCapacity.inc();
      sink.fail(
        RESOURCE_EXHAUSTED,
        `this server has ${this.options.settings.maxStreams} open quota streams (RLQS_MAX_STREAMS); try another server or later`,
      );
      return { report: () => {}, end: () => Promise.resolve() };
    }
    const stream: Stream = {
      id: `${this.instanceId}${(this.streamSeq++).toString(36)}`,
      sink,
      buckets: new Map(),
      byWire: new Map(),
      seq: 0,
      pushes: new Map(),
      pushScheduled: false,
      queue: Promise.resolve(),
      closed: false,
    };
    this.streams.add(stream);
    this.stats.streamsTotal.inc();
    this.stats.streams.set(this.streams.size);
    return {
      report: (reports) => {
        const received = performance.now();
        this.stats.reports.inc();
        this.enqueue(stream, () => this.handleReport(stream, reports, received));
      },
      end: () => this.closeStream(stream),
    };
  }

  private enqueue(stream: Stream, work: () => Promise<void>): Promise<void> {
    stream.queue = stream.queue
      .then(() => (stream.closed ? undefined : work()))
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'rlqs: stream work failed'));
    return stream.queue;
  }

  private track(stream: Stream, t: OwnedBucket): void {
    stream.buckets.set(t.id, t);
    this.bucketCount++;
    this.stats.buckets.set(this.bucketCount);
  }

  private untrack(stream: Stream, t: OwnedBucket): void {
    if (!stream.buckets.delete(t.id)) return;
    // Only entries that still point at `t` (the same bytes under another domain may have taken one).
    if (stream.byWire.get(t.idBytes) === t) stream.byWire.delete(t.idBytes);
    if (t.otherWireIds !== undefined)
      for (const w of t.otherWireIds) if (stream.byWire.get(w) === t) stream.byWire.delete(w);
    this.index(t, t.counterKey, undefined);
    this.bucketCount--;
    this.stats.buckets.set(this.bucketCount);
  }

  /** Moves `t` in the counter index from `before` to `after`. */
  private index(t: OwnedBucket, before: string | undefined, after: string | undefined): void {
    if (before === after) return;
    if (before !== undefined) {
      const held = this.byCounter.get(before);
      if (held === t) this.byCounter.delete(before);
      else if (held instanceof Set) {
        held.delete(t);
        if (held.size === 1) this.byCounter.set(before, held.values().next().value!);
      }
    }
    if (after !== undefined) {
      const held = this.byCounter.get(after);
      if (held === undefined) this.byCounter.set(after, t);
      else if (held instanceof Set) held.add(t);
      else if (held !== t) this.byCounter.set(after, new Set([held, t]));
    }
  }

  private rematch(t: OwnedBucket, config: RateLimitConfig | undefined): string | undefined {
    const before = rematch(t, config, this.matchContext);
    this.index(t, before, t.counterKey);
    return before;
  }

  private entry(t: TrackedBucket, allowed: number, leave = false, key = t.counterKey): QuotaReport {
    return { key: key!, member: t.member, allowed, windowSeconds: t.limit?.windowSeconds ?? 1, leave };
  }

  /**
   * The stream's bucket of `usage`: found by the bytes of its id (`wireId`, one lookup), else by
   * its canonical key (the same bucket sent with its pairs in another order), else a new one.
   * Undefined for an id Envoy's proto does not allow, or when the stream was closed for holding
   * too many buckets.
   */
  private bucketOf(
    stream: Stream,
    domain: string,
    usage: BucketUsage,
    now: number,
    config: RateLimitConfig | undefined,
  ): OwnedBucket | undefined {
    const bucketId = usage.bucketId;
    const id = bucketKey(domain, bucketId);
    // Envoy's proto requires a non-empty id with non-empty keys and values; nothing can answer another.
    if (id === undefined) return undefined;
    let t = stream.buckets.get(id);
    if (!t) {
      const settings = this.options.settings;
      if (stream.buckets.size >= settings.maxBucketsPerStream || this.bucketCount >= settings.maxBuckets) {
        const perStream = stream.buckets.size >= settings.maxBucketsPerStream;
        if (!perStream) {
          this.stats.overCapacity.inc();
          this.options.logger.warn(
            { buckets: this.bucketCount, streams: this.streams.size },
            'rlqs: RLQS_MAX_BUCKETS reached; a stream bringing new buckets is closed',
          );
        }
        stream.sink.fail(
          RESOURCE_EXHAUSTED,
          perStream
            ? `more than ${settings.maxBucketsPerStream} buckets on one stream (RLQS_MAX_BUCKETS_PER_STREAM)`
            : `this server tracks ${settings.maxBuckets} buckets (RLQS_MAX_BUCKETS); none more until some are abandoned`,
        );
        void this.closeStream(stream);
        return undefined;
      }
      t = {
        stream,
        domain,
        bucketId,
        id,
        idBytes: usage.wireId,
        otherWireIds: undefined,
        member: `${stream.id}.${(stream.seq++).toString(36)}`,
        config: undefined,
        limit: undefined,
        counterKey: undefined,
        shadow: false,
        lastReportMs: now,
        lastUsageMs: now,
        state: { participants: 0, usage: 0 },
        stateAt: 0,
        sent: undefined,
        cappedUntilMs: 0,
        reportMark: 0,
      };
      this.track(stream, t);
      this.rematch(t, config);
    }
    // A few spellings per bucket at most (Envoy sends one); bounded anyway.
    if (usage.wireId === t.idBytes) stream.byWire.set(usage.wireId, t);
    else if ((t.otherWireIds?.length ?? 0) < 3) {
      if (t.otherWireIds === undefined) t.otherWireIds = [usage.wireId];
      else t.otherWireIds.push(usage.wireId);
      stream.byWire.set(usage.wireId, t);
    }
    return t;
  }

  /**
   * A report: its buckets found (or created and matched), their counters' shared state updated in
   * the backend, and the answer. A large report goes in pieces of REPORT_CHUNK buckets: each
   * piece's backend call is sent as soon as it is ready (Redis works on it while the next piece
   * is prepared) and the event loop is let go between pieces, so other streams' reports are not
   * held behind it.
   */
  private async handleReport(stream: Stream, reports: UsageReports, received: number): Promise<void> {
    if (reports.domain === '') {
      stream.sink.fail(INVALID_ARGUMENT, 'rate limit quota usage reports: domain must not be empty');
      await this.closeStream(stream);
      return;
    }
    const now = this.options.now();
    const config = this.options.currentConfig();
    const domain = reports.domain;
    const usages = reports.usages;
    const touched: OwnedBucket[] = [];
    // The counts of each touched usage (not on the bucket: a report may hold a bucket twice).
    const allowedOf: number[] = [];
    const deniedOf: number[] = [];
    const calls: Promise<QuotaState[]>[] = [];
    for (let from = 0; from < usages.length; from += REPORT_CHUNK) {
      if (from > 0) await yieldToLoop();
      if (stream.closed) return;
      const counted: QuotaReport[] = [];
      const to = Math.min(usages.length, from + REPORT_CHUNK);
      for (let i = from; i < to; i++) {
        const usage = usages[i]!;
        let t = stream.byWire.get(usage.wireId);
        if (t === undefined || t.domain !== domain) {
          t = this.bucketOf(stream, domain, usage, now, config);
          if (t === undefined) {
            if (stream.closed) return;
            continue;
          }
        }
        if (t.config !== config) {
          const before = this.rematch(t, config);
          // The bucket moved to another counter: it leaves the old one (the answer below joins the new).
          if (before !== undefined && before !== t.counterKey)
            void this.leave([this.entry(t, 0, true, before)]);
        }
        t.lastReportMs = now;
        const allowed = Math.min(usage.allowed, MAX_REPORTED_COUNT);
        const denied = Math.min(usage.denied, MAX_REPORTED_COUNT);
        if (allowed + denied > 0) t.lastUsageMs = now;
        touched.push(t);
        allowedOf.push(allowed);
        deniedOf.push(denied);
        if (t.counterKey !== undefined) counted.push(this.entry(t, allowed));
      }
      if (counted.length > 0) calls.push(this.options.store.report(counted, now));
    }
    if (touched.length === 0) return;
    let states: QuotaState[];
    try {
      states = (await Promise.all(calls)).flat();
    } catch (error) {
      this.stats.backendErrors.inc();
      this.backendErrorLog.report(error);
      this.answerOnFailure(stream, touched);
      return;
    }
    // A bucket the report holds twice (the same id, or its pairs in another order) is counted each
    // time and answered once, with its state after the last: two actions for one bucket in one
    // answer would leave Envoy with whichever it applies last.
    const answered = touched.length > 1 && this.hasRepeat(touched) ? new Set<OwnedBucket>() : undefined;
    const actions: BucketAction[] = [];
    const changedCounters = new Map<string, QuotaState>();
    let next = 0;
    for (let i = 0; i < touched.length; i++) {
      const t = touched[i]!;
      if (t.counterKey !== undefined) {
        const state = states[next++]!;
        if (state.participants !== t.state.participants && this.hasPeersHere(t.counterKey, stream))
          changedCounters.set(t.counterKey, state);
        t.state = state;
        t.stateAt = now;
        countReport(
          t.limit!,
          allowedOf[i]!,
          deniedOf[i]!,
          state.usage,
          this.options.nearLimitRatio,
          t.shadow,
        );
      }
      const a = this.assign(t, now);
      if (a.capped && !a.shadowed && t.counterKey !== undefined && this.hasPeersHere(t.counterKey, stream))
        changedCounters.set(t.counterKey, t.state);
      if (answered === undefined) actions.push(this.action(t, a.strategy));
    }
    if (answered !== undefined) {
      // In the order of each bucket's first appearance, with what its last one left.
      for (const t of touched) {
        if (answered.has(t)) continue;
        answered.add(t);
        actions.push(this.action(t, t.sent!));
      }
    }
    this.send(stream, actions);
    this.stats.responseTime.record(performance.now() - received);
    for (const [key, state] of changedCounters) this.pushToPeers(key, state, now, stream);
  }

  /**
   * Whether a bucket appears twice in `touched` (Envoy sends each once): a mark per report on
   * the buckets, no set for the common case.
   */
  private hasRepeat(touched: readonly OwnedBucket[]): boolean {
    const mark = ++this.reportMark;
    let repeat = false;
    for (const t of touched) {
      if (t.reportMark === mark) repeat = true;
      t.reportMark = mark;
    }
    return repeat;
  }

  /** The assignment for `t` in its current state; remembers it as sent. */
  private assign(t: TrackedBucket, now: number): Assignment {
    const a = assignmentFor(t.limit, t.state, t.shadow);
    // As ShouldRateLimit counts each overridden call: each DENY_ALL that SHADOW_MODE turned into ALLOW_ALL.
    if (a.shadowed && this.options.globalShadowMode && !t.limit?.shadowMode) this.stats.globalShadow.inc();
    t.cappedUntilMs = a.capped ? windowEndMs(t, now) : 0;
    t.sent = a.strategy;
    return a;
  }

  private action(t: TrackedBucket, strategy: Strategy): BucketAction {
    return {
      bucketId: t.bucketId,
      idBytes: t.idBytes,
      kind: 'assign',
      strategy,
      ttlSeconds: this.options.settings.assignmentTtlSeconds,
    };
  }

  private send(stream: Stream, actions: readonly BucketAction[]): void {
    if (actions.length === 0 || stream.closed) return;
    for (const a of actions) {
      if (a.kind === 'assign') this.stats.sent[a.strategy.kind].inc();
      else this.stats.abandoned.inc();
    }
    stream.sink.send(actions);
  }

  /** BACKEND_FAILURE_MODE for a report the backend could not take: `allow`, `deny`, or nothing. */
  private answerOnFailure(stream: Stream, buckets: readonly TrackedBucket[]): void {
    const mode = this.options.failureMode;
    if (mode === 'error') return;
    const strategy: Strategy = { kind: mode === 'allow' ? 'allow_all' : 'deny_all' };
    this.send(
      stream,
      buckets.map((t) => this.action(t, t.counterKey === undefined ? { kind: 'allow_all' } : strategy)),
    );
  }

  /**
   * Whether `pushToPeers` would find a participant of the counter here besides `stream`'s: most
   * counters have none (each of 10,000 new buckets changes its counter's participants from 0 to 1),
   * and then the answer's tail collects no change for them.
   */
  private hasPeersHere(counterKey: string, stream: Stream): boolean {
    const held = this.byCounter.get(counterKey);
    return held !== undefined && (held instanceof Set || held.stream !== stream);
  }

  /**
   * A counter's participants or cap changed: this server's other participants get their new
   * assignment now, when it differs from what they hold.
   */
  private pushToPeers(counterKey: string, state: QuotaState, at: number, except: Stream | undefined): void {
    const held = this.byCounter.get(counterKey);
    if (held === undefined) return;
    // Most counters have no other participant here than `except`'s own bucket.
    if (!(held instanceof Set) && held.stream === except) return;
    const peers = held instanceof Set ? held : [held];
    for (const t of peers) {
      const stream = t.stream;
      if (stream.closed || stream === except) continue;
      const queued = stream.pushes.get(t);
      if (queued !== undefined && queued.at > at) continue;
      stream.pushes.set(t, { counterKey, state, at });
      if (!stream.pushScheduled) {
        stream.pushScheduled = true;
        void this.enqueue(stream, async () => this.drainPushes(stream));
      }
    }
  }

  /**
   * The pushes queued for `stream`, in one message: each bucket's newest state, applied unless the
   * bucket has seen a newer one since (its own report's answer), so a push that waited in the
   * stream's queue cannot flip an assignment back; only the assignments that changed are sent.
   */
  private drainPushes(stream: Stream): void {
    stream.pushScheduled = false;
    if (stream.pushes.size === 0) return;
    const now = this.options.now();
    const actions: BucketAction[] = [];
    for (const [t, push] of stream.pushes) {
      if (stream.buckets.get(t.id) !== t || t.counterKey !== push.counterKey || push.at < t.stateAt) continue;
      t.state = push.state;
      t.stateAt = push.at;
      const before = t.sent;
      const a = this.assign(t, now);
      if (!sameStrategy(before, a.strategy)) actions.push(this.action(t, a.strategy));
    }
    stream.pushes.clear();
    this.send(stream, actions);
  }

  /** Participants leaving their counters; their peers here get the bigger shares at once. */
  private async leave(entries: readonly QuotaReport[]): Promise<void> {
    if (entries.length === 0) return;
    try {
      const at = this.options.now();
      const states = await this.options.store.report(entries, at);
      for (const [i, e] of entries.entries()) this.pushToPeers(e.key, states[i]!, at, undefined);
    } catch (error) {
      // The participants age out of the shared state after the assignment TTL instead.
      this.stats.backendErrors.inc();
      this.options.logger.warn({ err: error }, 'rlqs: could not remove participants; they age out');
    }
  }

  private async closeStream(stream: Stream): Promise<void> {
    if (stream.closed) return;
    stream.closed = true;
    this.streams.delete(stream);
    this.stats.streams.set(this.streams.size);
    // The whole stream goes: only the server-wide counter index is undone bucket by bucket.
    const leaving: QuotaReport[] = [];
    for (const t of stream.buckets.values()) {
      if (t.counterKey === undefined) continue;
      leaving.push(this.entry(t, 0, true));
      this.index(t, t.counterKey, undefined);
    }
    this.bucketCount -= stream.buckets.size;
    this.stats.buckets.set(this.bucketCount);
    stream.buckets.clear();
    stream.byWire.clear();
    stream.pushes.clear();
    // A large stream leaves in pieces, one after the other: its backend calls do not hold the
    // other streams' reports behind them (10,000 buckets are about 25 ms of Redis' time).
    for (let from = 0; from < leaving.length; from += REPORT_CHUNK) {
      if (from > 0) await yieldToLoop();
      await this.leave(leaving.length <= REPORT_CHUNK ? leaving : leaving.slice(from, from + REPORT_CHUNK));
    }
  }

  /** Every second: lift the window cap of buckets whose window ended, abandon idle buckets. */
  private sweep(): void {
    const now = this.options.now();
    const abandonMs = this.options.settings.abandonAfterSeconds * 1000;
    for (const stream of this.streams) {
      let due = false;
      for (const t of stream.buckets.values()) {
        if ((t.cappedUntilMs > 0 && now >= t.cappedUntilMs) || now - t.lastUsageMs >= abandonMs) {
          due = true;
          break;
        }
      }
      if (due) void this.enqueue(stream, () => this.sweepStream(stream));
    }
  }

  private async sweepStream(stream: Stream): Promise<void> {
    const now = this.options.now();
    const abandonMs = this.options.settings.abandonAfterSeconds * 1000;
    const actions: BucketAction[] = [];
    const leaving: QuotaReport[] = [];
    for (const t of [...stream.buckets.values()]) {
      if (now - t.lastUsageMs >= abandonMs) {
        actions.push({ bucketId: t.bucketId, idBytes: t.idBytes, kind: 'abandon' });
        if (t.counterKey !== undefined) leaving.push(this.entry(t, 0, true));
        this.untrack(stream, t);
      } else if (t.cappedUntilMs > 0 && now >= t.cappedUntilMs) {
        // A new window: nothing counted in it yet (until the next report says otherwise).
        t.state = { participants: t.state.participants, usage: 0 };
        // A push queued before the window ended holds the old window's usage: not applied.
        t.stateAt = now;
        const a = this.assign(t, now);
        actions.push(this.action(t, a.strategy));
      }
    }
    this.send(stream, actions);
    await this.leave(leaving);
  }

  /**
   * A rules reload: every bucket is matched again; the buckets whose assignment changed get it now
   * (their counters' state read, and joined, in one backend call per stream).
   */
  reload(config: RateLimitConfig): void {
    for (const stream of this.streams) void this.enqueue(stream, () => this.refreshStream(stream, config));
  }

  private async refreshStream(stream: Stream, config: RateLimitConfig): Promise<void> {
    const now = this.options.now();
    const leaving: QuotaReport[] = [];
    const buckets = [...stream.buckets.values()];
    for (const t of buckets) {
      if (t.config === config) continue;
      const before = this.rematch(t, config);
      if (before !== undefined && before !== t.counterKey) leaving.push(this.entry(t, 0, true, before));
    }
    const counted = buckets.filter((t) => t.counterKey !== undefined);
    let states: QuotaState[];
    try {
      states = await this.options.store.report(
        counted.map((t) => this.entry(t, 0)),
        now,
      );
    } catch (error) {
      this.stats.backendErrors.inc();
      this.options.logger.error({ err: error }, 'rlqs: quota state backend call failed after a reload');
      return;
    }
    counted.forEach((t, i) => {
      t.state = states[i]!;
      t.stateAt = now;
    });
    const actions: BucketAction[] = [];
    for (const t of buckets) {
      if (t.counterKey === undefined) t.state = { participants: 0, usage: 0 };
      const before = t.sent;
      const a = this.assign(t, now);
      if (!sameStrategy(before, a.strategy)) actions.push(this.action(t, a.strategy));
    }
    this.send(stream, actions);
    await this.leave(leaving);
  }

  /** Ends every stream (status OK) and gives their shares back. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const streams = [...this.streams];
    for (const s of streams) s.sink.end();
    await Promise.all(streams.map((s) => this.closeStream(s)));
    await this.options.store.close();
  }

  /** Open streams (tests, /stats). */
  streamCount(): number {
    return this.streams.size;
  }
}
