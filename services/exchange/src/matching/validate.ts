import { fail, type MatchingError } from './errors.js';
import { isIdStride } from './id-keys.js';
import {
  type AmendCommand,
  type Asset,
  type Command,
  type MarketSpec,
  type OrderCommand,
  type Side,
  STP_MODES,
} from './types.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const PPM = 1_000_000;
const MAX_BUDGET = MAX_SAFE * MAX_SAFE;

/** A market spec with every default filled in. */
export interface Market {
  readonly id: string;
  readonly pricePrecision: number;
  readonly amountPrecision: number;
  readonly tickSize: bigint;
  readonly lotSize: bigint;
  readonly minAmount: bigint;
  readonly minTotal: bigint;
  readonly maxAmount: bigint;
  readonly makerFeePpm: bigint;
  readonly takerFeePpm: bigint;
  /** How the market's order ids step (MarketSpec `idStride`). */
  readonly idStride: number;
  /**
   * The same bounds as numbers (all within 2^53), for validation: comparing bigints is a runtime
   * call each, so a command's price and amount are converted once and checked as numbers.
   */
  readonly num: {
    readonly tick: number;
    readonly lot: number;
    readonly minAmount: number;
    readonly maxAmount: number;
  };
}

/** Fills defaults and checks the spec itself; a wrong spec is a programming error, so it throws. */
export function resolveMarket(spec: MarketSpec): Market {
  const lotSize = spec.lotSize ?? 1n;
  const tickSize = spec.tickSize ?? 1n;
  const minAmount = spec.minAmount ?? lotSize;
  const maxAmount = spec.maxAmount ?? 2n ** 43n;
  const market: Market = Object.freeze({
    id: spec.id,
    pricePrecision: spec.pricePrecision,
    amountPrecision: spec.amountPrecision,
    tickSize,
    lotSize,
    minAmount,
    minTotal: spec.minTotal ?? 1n,
    maxAmount,
    makerFeePpm: BigInt(spec.makerFeePpm ?? 0),
    takerFeePpm: BigInt(spec.takerFeePpm ?? 0),
    idStride: spec.idStride ?? 1,
    num: Object.freeze({
      tick: Number(tickSize),
      lot: Number(lotSize),
      minAmount: Number(minAmount),
      maxAmount: Number(maxAmount),
    }),
  });
  const bad = (what: string) => new Error(`market ${spec.id}: invalid ${what}`);
  for (const p of [market.pricePrecision, market.amountPrecision]) {
    if (!Number.isInteger(p) || p < 0 || p > 18) throw bad('precision');
  }
  if (market.tickSize <= 0n || market.lotSize <= 0n || market.minTotal < 1n) throw bad('step or minimum');
  if (market.tickSize > MAX_SAFE || market.lotSize > MAX_SAFE) throw bad('step');
  if (market.minAmount < market.lotSize || market.maxAmount > MAX_SAFE) throw bad('amount bounds');
  for (const fee of [market.makerFeePpm, market.takerFeePpm]) {
    if (fee < 0n || fee >= BigInt(PPM)) throw bad('fee rate');
  }
  if (!isIdStride(market.idStride)) throw bad('id stride (a power of two up to 2^20)');
  return market;
}

/** Fee on `received` at `ppm`, rounded down (the account never pays more than the nominal rate). */
export function feeOf(received: bigint, ppm: bigint): bigint {
  return ppm === 0n ? 0n : (received * ppm) / 1_000_000n;
}

export interface Lock {
  readonly asset: Asset;
  readonly amount: bigint;
}

const NO_LOCK: Lock = Object.freeze({ asset: 'base', amount: 0n });

function checkSide(side: Side): MatchingError | null {
  return side === 'buy' || side === 'sell' ? null : fail('INVALID_SIDE', 'side must be buy or sell');
}

const MAX_SAFE_NUMBER = Number.MAX_SAFE_INTEGER;

// Number() of a bigint above 2^53 rounds to a double >= 2^53, so `> MAX_SAFE_NUMBER` still catches
// it, and below 2^53 the conversion and the `%` are exact.
function checkPrice(market: Market, price: bigint, what: string): MatchingError | null {
  const p = typeof price === 'bigint' ? Number(price) : Number.NaN;
  if (!(p > 0 && p <= MAX_SAFE_NUMBER)) {
    return fail('INVALID_PRICE', `${what} must be a positive integer number of price minor units`);
  }
  if (market.num.tick !== 1 && p % market.num.tick !== 0) {
    return fail('PRICE_PRECISION', `${what} must be a multiple of the tick size ${market.tickSize}`);
  }
  return null;
}

function checkAmount(market: Market, amount: bigint): MatchingError | null {
  const a = typeof amount === 'bigint' ? Number(amount) : Number.NaN;
  if (!(a > 0)) return fail('INVALID_AMOUNT', 'amount must be positive');
  const { lot, minAmount, maxAmount } = market.num;
  if (lot !== 1 && a <= MAX_SAFE_NUMBER && a % lot !== 0) {
    return fail('AMOUNT_PRECISION', `amount must be a multiple of the lot size ${market.lotSize}`);
  }
  if (a < minAmount) return fail('AMOUNT_TOO_SMALL', `amount is below ${market.minAmount}`);
  if (a > maxAmount) return fail('AMOUNT_TOO_LARGE', `amount is above ${market.maxAmount}`);
  return null;
}

function checkBudget(budget: bigint | undefined, max: bigint): MatchingError | null {
  if (typeof budget !== 'bigint' || budget <= 0n || budget > max) {
    return fail('INVALID_BUDGET', 'budget must be a positive integer within range');
  }
  return null;
}

/** The static checks of an amend (the engine checks it against the order); it locks nothing up front. */
export function checkAmend(market: Market, cmd: AmendCommand): Lock | MatchingError {
  if (!Number.isSafeInteger(cmd.id) || cmd.id <= 0) {
    return fail('INVALID_ORDER_ID', 'order id must be a positive safe integer');
  }
  if (cmd.amount === undefined && cmd.price === undefined) {
    return fail('INVALID_COMMAND', 'an amend changes the amount, the price or both');
  }
  if (cmd.price !== undefined) {
    const priceError = checkPrice(market, cmd.price, 'price');
    if (priceError !== null) return priceError;
  }
  if (cmd.amount !== undefined) {
    const amountError = checkAmount(market, cmd.amount);
    if (amountError !== null) return amountError;
  }
  return NO_LOCK;
}

/**
 * Validates an order command against the market and says what the ledger must lock to accept it.
 * Pure and cheap: the order-entry path calls it BEFORE the engine to check the account's available
 * balance, then submits to the engine, which validates again and emits the same lock in `accepted`.
 *
 * - limit / limit_stop_loss buy: price * amount quote; sell: amount base.
 * - market buy: the caller's quote `budget`; market sell: amount base.
 * - market_by_quote buy: `quote`; market_by_quote sell: the caller's base `budget`.
 *
 * No fee reserve is needed: fees are charged in the currency the side receives, out of what it receives.
 */
export function lockFor(market: Market, cmd: Command): Lock | MatchingError {
  if (cmd === null || typeof cmd !== 'object') return fail('INVALID_COMMAND', 'command must be an object');
  if (cmd.type === 'cancel') return NO_LOCK;
  if (cmd.type === 'amend') return checkAmend(market, cmd);
  return lockForOrder(market, cmd);
}

/**
 * `lockFor` of an order command. Apart so that the engine calls it with order commands only: the
 * property loads here then see the few shapes of order commands, not every command's (with cancels
 * and amends beside them they went megamorphic, issue 43's variant).
 */
export function lockForOrder(market: Market, cmd: OrderCommand): Lock | MatchingError {
  const type: string = cmd.type;
  if (type !== 'limit' && type !== 'market' && type !== 'market_by_quote' && type !== 'limit_stop_loss') {
    return fail('INVALID_COMMAND', 'unknown command type');
  }
  if (!Number.isSafeInteger(cmd.id) || cmd.id <= 0) {
    return fail('INVALID_ORDER_ID', 'order id must be a positive safe integer');
  }
  const sideError = checkSide(cmd.side);
  if (sideError !== null) return sideError;
  if (cmd.stp !== undefined && !STP_MODES.includes(cmd.stp)) {
    return fail('INVALID_STP', `stp must be one of ${STP_MODES.join(', ')}`);
  }
  if (cmd.type === 'limit') {
    if (cmd.tif !== undefined && cmd.tif !== 'gtc' && cmd.tif !== 'ioc' && cmd.tif !== 'fok') {
      return fail('INVALID_TIME_IN_FORCE', 'time in force must be gtc, ioc or fok');
    }
    if (cmd.postOnly !== undefined && typeof cmd.postOnly !== 'boolean') {
      return fail('INVALID_COMMAND', 'post only must be a boolean');
    }
    if (cmd.postOnly === true && cmd.tif !== undefined && cmd.tif !== 'gtc') {
      return fail('INVALID_TIME_IN_FORCE', 'a post-only order rests: its time in force is gtc');
    }
  }
  switch (cmd.type) {
    case 'limit':
    case 'limit_stop_loss': {
      const priceError =
        checkPrice(market, cmd.price, 'price') ??
        (cmd.type === 'limit_stop_loss' ? checkPrice(market, cmd.stopPrice, 'stop price') : null) ??
        checkAmount(market, cmd.amount);
      if (priceError !== null) return priceError;
      // price and amount are at least 1, so the total only needs checking above a minimum of 1.
      const total = cmd.side === 'buy' || market.minTotal > 1n ? cmd.price * cmd.amount : 1n;
      if (total < market.minTotal) return fail('TOTAL_TOO_SMALL', `order total is below ${market.minTotal}`);
      return cmd.side === 'buy' ? { asset: 'quote', amount: total } : { asset: 'base', amount: cmd.amount };
    }
    case 'market': {
      const amountError = checkAmount(market, cmd.amount);
      if (amountError !== null) return amountError;
      if (cmd.side === 'sell') return { asset: 'base', amount: cmd.amount };
      const budgetError = checkBudget(cmd.budget, MAX_BUDGET);
      return budgetError ?? { asset: 'quote', amount: cmd.budget! };
    }
    case 'market_by_quote': {
      if (typeof cmd.quote !== 'bigint' || cmd.quote <= 0n) {
        return fail('INVALID_AMOUNT', 'quote amount must be positive');
      }
      if (cmd.quote < market.minTotal) return fail('TOTAL_TOO_SMALL', `quote is below ${market.minTotal}`);
      if (cmd.side === 'buy') return { asset: 'quote', amount: cmd.quote };
      const budgetError = checkBudget(cmd.budget, MAX_SAFE);
      return budgetError ?? { asset: 'base', amount: cmd.budget! };
    }
    default:
      return fail('INVALID_COMMAND', 'unknown command type');
  }
}
