import type { MarketSpec } from '../matching/types.js';
import { formatAmount, rescale } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import type { MarketFile } from '../reference/schema.js';

/** Maker and taker fee rates, parts per million of what each side receives. */
export interface FeeRates {
  readonly makerFeePpm: number;
  readonly takerFeePpm: number;
}

export const DEFAULT_FEES: FeeRates = Object.freeze({ makerFeePpm: 1_000, takerFeePpm: 2_000 });

/**
 * One market with the unit conversions between the engine (base in 10^-base_precision, price in
 * 10^-quote_precision, quote totals in 10^-(base_precision + quote_precision)) and the ledger
 * (each currency's ledger_precision). Widening is exact; the reference loader guarantees it.
 */
export interface TradingMarket {
  readonly id: string;
  readonly file: MarketFile;
  readonly base: string;
  readonly quote: string;
  readonly spec: MarketSpec;
  /** Decimals of engine quote totals. */
  readonly totalPrecision: number;
  baseToLedger(amount: bigint): bigint;
  quoteToLedger(total: bigint): bigint;
  /** Ledger minor units of the base currency to engine base units, rounded down. */
  ledgerToBase(minor: bigint): bigint;
  /** Ledger minor units of the quote currency to engine quote units, rounded down. */
  ledgerToQuote(minor: bigint): bigint;
  formatPrice(price: bigint): string;
  formatAmount(amount: bigint): string;
  formatTotal(total: bigint): string;
}

/**
 * `fees` applies to markets whose reference entry sets no `maker_fee_ppm` / `taker_fee_ppm` of its own;
 * `idStride` is how the market's order ids step (a cluster's, writer.ts `ID_STRIDE`), for its engines.
 */
export function tradingMarket(
  reference: ReferenceData,
  file: MarketFile,
  fees: FeeRates,
  idStride = 1,
): TradingMarket {
  const basePrecision = reference.ledgerPrecision(file.base_unit);
  const quotePrecision = reference.ledgerPrecision(file.quote_unit);
  const totalPrecision = file.base_precision + file.quote_precision;
  const narrow = (minor: bigint, from: number, to: number): bigint => minor / 10n ** BigInt(from - to);
  return Object.freeze({
    id: file.id,
    file,
    base: file.base_unit,
    quote: file.quote_unit,
    spec: Object.freeze({
      id: file.id,
      pricePrecision: file.quote_precision,
      amountPrecision: file.base_precision,
      makerFeePpm: file.maker_fee_ppm ?? fees.makerFeePpm,
      takerFeePpm: file.taker_fee_ppm ?? fees.takerFeePpm,
      idStride,
    }),
    totalPrecision,
    baseToLedger: (amount: bigint) => rescale(amount, file.base_precision, basePrecision),
    quoteToLedger: (total: bigint) => rescale(total, totalPrecision, quotePrecision),
    ledgerToBase: (minor: bigint) => narrow(minor, basePrecision, file.base_precision),
    ledgerToQuote: (minor: bigint) => narrow(minor, quotePrecision, totalPrecision),
    formatPrice: (price: bigint) => formatAmount(price, file.quote_precision),
    formatAmount: (amount: bigint) => formatAmount(amount, file.base_precision),
    formatTotal: (total: bigint) => formatAmount(total, totalPrecision),
  });
}

/** Every market of the reference data, by id (`idStride` as for `tradingMarket`). */
export function tradingMarkets(
  reference: ReferenceData,
  fees: FeeRates,
  idStride = 1,
): Map<string, TradingMarket> {
  return new Map(reference.markets.map((file) => [file.id, tradingMarket(reference, file, fees, idStride)]));
}

/** Average price of `funds` (quote total units) over `executed` (base units), in price units, rounded down. */
export function averagePrice(funds: bigint, executed: bigint): bigint {
  if (executed === 0n) return 0n;
  return funds / executed;
}
