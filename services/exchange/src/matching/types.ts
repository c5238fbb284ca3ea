/**
 * Public types of the matching engine: the market it runs, the commands it accepts and the events it
 * emits. Every money amount crossing this boundary is a bigint in minor units:
 *
 * - base amounts in units of 10^-amountPrecision of the base currency ("lots of 1"),
 * - prices in units of 10^-pricePrecision of the quote currency per one whole base unit,
 * - quote amounts (totals, budgets, fees in quote) in units of 10^-(pricePrecision + amountPrecision)
 *   of the quote currency, so that `quote = price * amount` is exact with no rounding at all.
 *
 * See README.md in this folder for the settlement rules the ledger applies to these events.
 */

export type Side = 'buy' | 'sell';

/** Which currency of the market a lock, release or fee is in. */
export type Asset = 'base' | 'quote';

export interface MarketSpec {
  /** Market key, e.g. `btcuah`. Copied into every event. */
  readonly id: string;
  /** Decimal places of prices (quote currency per one base unit). */
  readonly pricePrecision: number;
  /** Decimal places of base amounts. */
  readonly amountPrecision: number;
  /** Price step in price minor units. @default 1n */
  readonly tickSize?: bigint;
  /** Amount step in amount minor units. @default 1n */
  readonly lotSize?: bigint;
  /** Smallest base amount of an order, in amount minor units. @default lotSize */
  readonly minAmount?: bigint;
  /** Smallest quote total (price * amount, or the quote of a market_by_quote order). @default 1n */
  readonly minTotal?: bigint;
  /**
   * Largest base amount of one order. Internally amounts and prices are JavaScript numbers (exact
   * integers), so this keeps the per-level volume sums exact.
   * @default 2n ** 43n
   */
  readonly maxAmount?: bigint;
  /** Maker fee in parts per million of what the maker receives. @default 0 */
  readonly makerFeePpm?: number;
  /** Taker fee in parts per million of what the taker receives. @default 0 */
  readonly takerFeePpm?: number;
  /**
   * The market's order ids step by this (a power of two): a cluster's markets interleave their ids
   * (src/orders/writer.ts `ID_STRIDE`). Only the layout of the engine's id-paged structures follows it
   * (id-keys.ts); any id is still accepted. @default 1
   */
  readonly idStride?: number;
}

/** Caller-assigned order ids are positive safe integers, unique across the engine's life. */
export type OrderId = number;

interface CommandBase {
  /** Caller's clock in ms; copied into events, never read from the system. */
  readonly time: number;
}

export interface LimitCommand extends CommandBase {
  readonly type: 'limit';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly price: bigint;
  readonly amount: bigint;
}

/**
 * Market order by base amount. A buy needs `budget`: the most quote the caller lets it spend (the
 * ledger locks exactly this much, typically the account's available quote balance).
 */
export interface MarketCommand extends CommandBase {
  readonly type: 'market';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly amount: bigint;
  /** Required for a buy (quote minor units), ignored for a sell. */
  readonly budget?: bigint;
}

/**
 * Market order by quote amount: a buy spends up to `quote`; a sell sells base until it has received
 * up to `quote` (gross), using at most `budget` base (required for a sell, locked at acceptance).
 */
export interface MarketByQuoteCommand extends CommandBase {
  readonly type: 'market_by_quote';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly quote: bigint;
  /** Required for a sell (base minor units), ignored for a buy. */
  readonly budget?: bigint;
}

/** Stop-limit: rests invisibly until the last trade price reaches `stopPrice`, then acts as a limit order. */
export interface StopLimitCommand extends CommandBase {
  readonly type: 'limit_stop_loss';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly price: bigint;
  readonly stopPrice: bigint;
  readonly amount: bigint;
}

export interface CancelCommand extends CommandBase {
  readonly type: 'cancel';
  readonly id: OrderId;
  /** When given, the order must belong to this account (otherwise ORDER_NOT_FOUND). */
  readonly account?: string;
}

export type Command = LimitCommand | MarketCommand | MarketByQuoteCommand | StopLimitCommand | CancelCommand;
export type OrderKind = Exclude<Command['type'], 'cancel'>;

export interface AcceptedEvent {
  readonly type: 'accepted';
  readonly seq: number;
  readonly time: number;
  readonly market: string;
  readonly orderId: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly kind: OrderKind;
  /** Limit price (limit, limit_stop_loss), otherwise null. */
  readonly price: bigint | null;
  readonly stopPrice: bigint | null;
  /** Base amount (limit, limit_stop_loss, market), otherwise null. */
  readonly amount: bigint | null;
  /** Quote amount of a market_by_quote order, otherwise null. */
  readonly quote: bigint | null;
  /** The ledger moves exactly this much from available to locked when it accepts the order. */
  readonly lockAsset: Asset;
  readonly lock: bigint;
}

/**
 * One fill. Settlement (see README): buyer locked quote -= quote + buyerRelease, buyer available
 * quote += buyerRelease, buyer available base += amount - buyerFee; seller locked base -= amount,
 * seller available quote += quote - sellerFee; fee account base += buyerFee, quote += sellerFee.
 */
export interface TradeEvent {
  readonly type: 'trade';
  readonly seq: number;
  readonly time: number;
  readonly market: string;
  /** Per-engine trade sequence, starting at 1. */
  readonly tradeId: number;
  readonly price: bigint;
  readonly amount: bigint;
  /** price * amount, in quote minor units. */
  readonly quote: bigint;
  readonly takerSide: Side;
  readonly buyOrderId: OrderId;
  readonly buyAccount: string;
  readonly sellOrderId: OrderId;
  readonly sellAccount: string;
  /** Fee paid by the buyer, in base (the currency the buyer receives). */
  readonly buyerFee: bigint;
  /** Fee paid by the seller, in quote (the currency the seller receives). */
  readonly sellerFee: bigint;
  /** Quote the buyer had locked above the trade price (price improvement of a buy limit taker). */
  readonly buyerRelease: bigint;
}

/**
 * Why an order left: `filled` (amount reached; for market_by_quote: the quote target or budget cannot
 * buy one more lot), `cancelled` (cancel command), `self_trade` (resting order cancelled by self-trade
 * prevention), `no_liquidity` (a market order ran out of book), `budget_exhausted` (a market buy by base,
 * or a market_by_quote sell, used up the budget it was given before reaching its amount).
 */
export type DoneReason = 'filled' | 'cancelled' | 'self_trade' | 'no_liquidity' | 'budget_exhausted';

/** The order left the engine. `release` of `releaseAsset` goes from locked back to available. */
export interface DoneEvent {
  readonly type: 'done';
  readonly seq: number;
  readonly time: number;
  readonly market: string;
  readonly orderId: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly reason: DoneReason;
  /** Final status for order listings: `filled` (v2 `done`) or `cancelled` (v2 `cancel`). */
  readonly status: 'filled' | 'cancelled';
  /** Base amount never executed (0 for a fully filled order; for market_by_quote, 0). */
  readonly remaining: bigint;
  readonly releaseAsset: Asset;
  readonly release: bigint;
}

export interface StopTriggeredEvent {
  readonly type: 'stop_triggered';
  readonly seq: number;
  readonly time: number;
  readonly market: string;
  readonly orderId: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly stopPrice: bigint;
  /** The last trade price that triggered it. */
  readonly lastPrice: bigint;
}

export type EngineEvent = AcceptedEvent | TradeEvent | DoneEvent | StopTriggeredEvent;
