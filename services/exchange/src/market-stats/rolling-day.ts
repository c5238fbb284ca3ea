import { Deque } from './queue.js';

/** One trade as the rolling statistics need it; amounts in the market's engine units. */
export interface WindowTrade {
  /** Trade id: ids grow in the order a market's trades were committed. */
  readonly id: number;
  /** Milliseconds since the epoch, as the writer stamped the trade. */
  readonly createdAt: number;
  readonly price: bigint;
  /** Base amount. */
  readonly amount: bigint;
  /** Quote total. */
  readonly quote: bigint;
}

/** Statistics of the trades of a window: the shape `dayStats` (orders/store.ts) gives from SQL. */
export interface WindowStats {
  /** Price of the first and of the last trade of the window (by id). */
  readonly open: bigint;
  readonly last: bigint;
  readonly high: bigint;
  readonly low: bigint;
  /** Sum of base amounts. */
  readonly volume: bigint;
  /** Sum of quote totals. */
  readonly funds: bigint;
}

/**
 * The trades of one millisecond, merged: they enter and leave the window together, so one record
 * keeps what the statistics need of them (a burst of fills costs one record, not one per fill).
 */
interface Bucket {
  readonly createdAt: number;
  readonly open: bigint;
  last: bigint;
  high: bigint;
  low: bigint;
  volume: bigint;
  funds: bigint;
}

/**
 * Exact statistics over the trades of one market whose time is within `windowMs` of a clock that is
 * passed in: a trade counts while `createdAt >= now - windowMs`, as in the SQL aggregation it
 * replaces. Trades are added in id order and leave from the front as the clock moves; the highest
 * and lowest prices come from monotonic queues (each record enters and leaves each queue once), so
 * the high is still exact after the trade that made it expires. Sums are kept as running bigints.
 *
 * The window assumes, like the writer guarantees with a clock that does not go back, that trade
 * times do not decrease in id order, and that `now` does not go back: a trade once expired is gone.
 * Memory is one small record per millisecond with trades in the window.
 */
export class RollingDay {
  private readonly buckets = new Deque<Bucket>();
  /** Records no later record exceeds in high: highs non-increasing front to back. */
  private readonly highs = new Deque<Bucket>();
  /** Records no later record undercuts in low: lows non-decreasing front to back. */
  private readonly lows = new Deque<Bucket>();
  private volume = 0n;
  private funds = 0n;
  private lastId = 0;

  constructor(readonly windowMs: number) {}

  /** Number of records held (milliseconds with trades, not yet evicted). */
  get size(): number {
    return this.buckets.size;
  }

  /** Id of the newest trade ever added (0 before the first). */
  get newestId(): number {
    return this.lastId;
  }

  /** Adds a trade newer than every trade added before; an id seen already is ignored (replays). */
  add(trade: WindowTrade): void {
    if (trade.id <= this.lastId) return;
    this.lastId = trade.id;
    this.volume += trade.amount;
    this.funds += trade.quote;
    const newest = this.buckets.back();
    if (newest?.createdAt === trade.createdAt) {
      // The newest record is the back of both queues (nothing came after it): take it out, widen it,
      // and put it back where it now belongs.
      newest.last = trade.price;
      newest.volume += trade.amount;
      newest.funds += trade.quote;
      if (trade.price > newest.high) newest.high = trade.price;
      if (trade.price < newest.low) newest.low = trade.price;
      this.highs.popBack();
      this.lows.popBack();
      this.enqueue(newest);
      return;
    }
    const bucket: Bucket = {
      createdAt: trade.createdAt,
      open: trade.price,
      last: trade.price,
      high: trade.price,
      low: trade.price,
      volume: trade.amount,
      funds: trade.quote,
    };
    this.buckets.pushBack(bucket);
    this.enqueue(bucket);
  }

  private enqueue(bucket: Bucket): void {
    while ((this.highs.back()?.high ?? bucket.high) < bucket.high) this.highs.popBack();
    this.highs.pushBack(bucket);
    while ((this.lows.back()?.low ?? bucket.low) > bucket.low) this.lows.popBack();
    this.lows.pushBack(bucket);
  }

  /** Drops the trades that are out of the window at `now`. */
  advance(now: number): void {
    const since = now - this.windowMs;
    for (;;) {
      const oldest = this.buckets.front();
      if (oldest === undefined || oldest.createdAt >= since) return;
      this.buckets.popFront();
      this.volume -= oldest.volume;
      this.funds -= oldest.funds;
      if (this.highs.front() === oldest) this.highs.popFront();
      if (this.lows.front() === oldest) this.lows.popFront();
    }
  }

  /** The statistics of the window at `now` (evicting what left it), undefined without trades in it. */
  stats(now: number): WindowStats | undefined {
    this.advance(now);
    const first = this.buckets.front();
    const last = this.buckets.back();
    if (first === undefined || last === undefined) return undefined;
    return {
      open: first.open,
      last: last.last,
      high: this.highs.front()!.high,
      low: this.lows.front()!.low,
      volume: this.volume,
      funds: this.funds,
    };
  }
}
