import { type JournalEntry, type Leg, validateEntry } from '../ledger/entry.js';
import type { Asset, DoneEvent, TradeEvent } from '../matching/types.js';
import type { TradingMarket } from './markets.js';

/**
 * The ledger side of the engine's events (pure): the rules of src/matching/README.md, with engine
 * units widened to ledger minor units. Engine accounts are account ids as decimal strings.
 */

function currencyOf(market: TradingMarket, asset: Asset): string {
  return asset === 'base' ? market.base : market.quote;
}

function ledgerAmount(market: TradingMarket, asset: Asset, amount: bigint): bigint {
  return asset === 'base' ? market.baseToLedger(amount) : market.quoteToLedger(amount);
}

function checked(entry: JournalEntry): JournalEntry {
  const result = validateEntry(entry);
  if (!result.ok) throw new Error(`settlement entry ${entry.reason}: ${result.detail}`);
  return entry;
}

/** Available -> locked (an order is accepted) or back (`done`: what the order did not use). */
export function lockEntry(
  market: TradingMarket,
  accountId: number,
  asset: Asset,
  amount: bigint,
  orderId: number,
  unlock: boolean,
): JournalEntry | undefined {
  const minor = ledgerAmount(market, asset, amount);
  if (minor === 0n) return undefined;
  const currency = currencyOf(market, asset);
  const sign = unlock ? -1n : 1n;
  return checked({
    kind: unlock ? 'unlock' : 'lock',
    reason: `order ${orderId}`,
    legs: [
      { accountId, currency, bucket: 'available', amount: -minor * sign },
      { accountId, currency, bucket: 'locked', amount: minor * sign },
    ],
  });
}

export function releaseEntry(market: TradingMarket, done: DoneEvent): JournalEntry | undefined {
  return lockEntry(market, Number(done.account), done.releaseAsset, done.release, done.orderId, true);
}

/**
 * One fill: the buyer's locked quote pays the seller, the seller's locked base goes to the buyer,
 * each side's fee (in the currency it receives) goes to the fee account, and the buyer's price
 * improvement returns to its available quote.
 */
export function tradeEntry(
  market: TradingMarket,
  trade: TradeEvent,
  tradeId: number,
  feeAccountId: number,
): JournalEntry {
  const buyer = Number(trade.buyAccount);
  const seller = Number(trade.sellAccount);
  const base = market.baseToLedger(trade.amount);
  const quote = market.quoteToLedger(trade.quote);
  const buyerFee = market.baseToLedger(trade.buyerFee);
  const sellerFee = market.quoteToLedger(trade.sellerFee);
  const improvement = market.quoteToLedger(trade.buyerRelease);
  const legs: Leg[] = [
    { accountId: buyer, currency: market.quote, bucket: 'locked', amount: -(quote + improvement) },
    { accountId: buyer, currency: market.quote, bucket: 'available', amount: improvement },
    { accountId: buyer, currency: market.base, bucket: 'available', amount: base - buyerFee },
    { accountId: seller, currency: market.base, bucket: 'locked', amount: -base },
    { accountId: seller, currency: market.quote, bucket: 'available', amount: quote - sellerFee },
    { accountId: feeAccountId, currency: market.base, bucket: 'available', amount: buyerFee },
    { accountId: feeAccountId, currency: market.quote, bucket: 'available', amount: sellerFee },
  ];
  return checked({
    kind: 'trade',
    reason: `trade ${tradeId} ${market.id}`,
    legs: legs.filter((leg) => leg.amount !== 0n),
  });
}
