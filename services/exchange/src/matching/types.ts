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

/**
 * How long a limit order's rest may stay: `gtc` rests, `ioc` cancels what did not trade at once
 * (`ioc_rest_cancelled`), `fok` trades its whole amount at once or nothing (`fok_not_filled`).
 */
export type TimeInForce = 'gtc' | 'ioc' | 'fok';

/**
 * Self-trade prevention, the taker's mode decides (Binance's names): `expire_maker` cancels the resting
 * order and the taker carries on; `expire_taker` ends the taker; `expire_both` does both; `decrement`
 * reduces both by the overlap without a trade (the smaller, or both when equal, expires); `none` lets
 * the trade happen (flagged `selfTrade`).
 */
export type StpMode = 'expire_maker' | 'expire_taker' | 'expire_both' | 'decrement' | 'none';

export const STP_MODES: readonly StpMode[] = [
  'expire_maker',
  'expire_taker',
  'expire_both',
  'decrement',
  'none',
];

/** Order options every order command may carry. */
interface OrderOptions {
  /** Self-trade prevention when this order takes. @default 'expire_maker' */
  readonly stp?: StpMode;
}

export interface LimitCommand extends CommandBase, OrderOptions {
  readonly type: 'limit';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly price: bigint;
  readonly amount: bigint;
  /** @default 'gtc' */
  readonly tif?: TimeInForce;
  /** Refused (`POST_ONLY_WOULD_TAKE`, nothing changes) when it would trade at once. */
  readonly postOnly?: boolean;
}

/**
 * Market order by base amount. A buy needs `budget`: the most quote the caller lets it spend (the
 * ledger locks exactly this much, typically the account's available quote balance).
 */
export interface MarketCommand extends CommandBase, OrderOptions {
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
export interface MarketByQuoteCommand extends CommandBase, OrderOptions {
  readonly type: 'market_by_quote';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly quote: bigint;
  /** Required for a sell (base minor units), ignored for a buy. */
  readonly budget?: bigint;
}

/** Stop-limit: rests invisibly until the last trade price reaches `stopPrice`, then acts as a limit order. */
export interface StopLimitCommand extends CommandBase, OrderOptions {
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

/**
 * Changes a resting order in place, same id: `amount` is its new total (filled plus remaining, must
 * exceed what is filled), `price` its new limit. A smaller remaining at the same price keeps its place
 * in the queue; a new price or a larger remaining moves it to the back of its (new) level. A new
 * price that would trade at once is refused (`AMEND_WOULD_TAKE`). Stop orders waiting to trigger
 * cannot be amended.
 */
export interface AmendCommand extends CommandBase {
  readonly type: 'amend';
  readonly id: OrderId;
  /** When given, the order must belong to this account (otherwise ORDER_NOT_FOUND). */
  readonly account?: string;
  readonly amount?: bigint;
  readonly price?: bigint;
}

export type Command =
  | LimitCommand
  | MarketCommand
  | MarketByQuoteCommand
  | StopLimitCommand
  | CancelCommand
  | AmendCommand;
/** A command that places an order. */
export type OrderCommand = Exclude<Command, { type: 'cancel' | 'amend' }>;
export type OrderKind = OrderCommand['type'];

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
  /** Both sides are one account (the taker's `stp` was `none`). */
  readonly selfTrade: boolean;
}

/**
 * Why an order left: `filled` (amount reached; for market_by_quote: the quote target or budget cannot
 * buy one more lot), `cancelled` (cancel command), `self_trade_prevented` (ended by self-trade prevention,
 * mode in `stp`), `fok_not_filled`, `ioc_rest_cancelled`, `no_liquidity` (a market order ran out of book), `budget_exhausted` (a market buy by base,
 * or a market_by_quote sell, used up the budget it was given before reaching its amount).
 */
export type DoneReason =
  | 'filled'
  | 'cancelled'
  | 'self_trade_prevented'
  | 'no_liquidity'
  | 'budget_exhausted'
  | 'fok_not_filled'
  | 'ioc_rest_cancelled';

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
  /** The taker's self-trade prevention mode when `reason` is `self_trade_prevented`, else null. */
  readonly stp: StpMode | null;
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

/**
 * A resting order changed in place: by an amend command (`reason` `amend`), or reduced by
 * self-trade prevention `decrement` (`reason` `self_trade_prevented`, `priority` `kept`). `lockDelta`
 * of `lockAsset` moves from available to locked when positive, back when negative; `amount` is the
 * order's new total (filled plus `remaining`).
 */
export interface AmendedEvent {
  readonly type: 'amended';
  readonly seq: number;
  readonly time: number;
  readonly market: string;
  readonly orderId: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly reason: 'amend' | 'self_trade_prevented';
  readonly stp: StpMode | null;
  readonly price: bigint;
  readonly amount: bigint;
  readonly remaining: bigint;
  /** `kept`: the order kept its place in the queue; `moved`: it went to the back of its (new) level. */
  readonly priority: 'kept' | 'moved';
  readonly lockAsset: Asset;
  readonly lockDelta: bigint;
}

export type EngineEvent = AcceptedEvent | TradeEvent | DoneEvent | StopTriggeredEvent | AmendedEvent;
