import { readFileSync } from 'node:fs';
import { Value } from 'typebox/value';
import { parse } from 'yaml';
import { divideDecimals, multiplyDecimals } from '../money/decimal.js';
import { type CurrencyFile, type MarketFile, ReferenceFile } from './schema.js';

/** One fee entry exactly as the spec's fee resource (fiat or coin). */
export type FeeEntry =
  | {
      code: string;
      category: string;
      deposit_fees: { type: string; amount: string }[];
      withdraw_fees: { type: string; amount: string }[];
    }
  | {
      code: string;
      category: 'coin';
      deposit_fees: never[];
      withdraw_fees: { type: 'fixed'; asset: { amount: number; currency: string; to_usd: string } }[];
      min_deposit: { amount: number; currency: string; to_usd: string };
      min_withdraw: { amount: number; currency: string; to_usd: string };
    };

export interface ExchangeRate {
  currency: string;
  [target: string]: number | string;
}

/** Reference data loaded at start-up: immutable, looked up by lower-case code. */
/** A currency as the spec publishes it. */
export type Currency = Omit<CurrencyFile, 'ledger_precision'>;

export interface ReferenceData {
  readonly currencies: readonly Currency[];
  readonly markets: readonly (MarketFile & { price_change: number })[];
  readonly fees: readonly FeeEntry[];
  readonly rates: readonly ExchangeRate[];
  currency(code: string): Currency | undefined;
  /** Decimals of the ledger's minor units of a currency (see `ledger_precision`). */
  ledgerPrecision(code: string): number;
  market(id: string): MarketFile | undefined;
}

/** The spec's exchange-rate object always carries these rates. */
export const SPEC_RATE_TARGETS = ['usd', 'uah', 'btc', 'eur', 'rub'] as const;

export class ReferenceDataError extends Error {
  constructor(file: string, problem: string) {
    super(`reference data ${file}: ${problem}`);
    this.name = 'ReferenceDataError';
  }
}

function unique<T>(items: readonly T[], key: (item: T) => string | number, what: string, file: string): void {
  const seen = new Set<string | number>();
  for (const item of items) {
    const value = key(item);
    if (seen.has(value)) throw new ReferenceDataError(file, `duplicate ${what} "${value}"`);
    seen.add(value);
  }
}

/** Validates a parsed reference document and derives the public resources from it. */
export function buildReferenceData(document: unknown, file = '<inline>'): ReferenceData {
  if (!Value.Check(ReferenceFile, document)) {
    const first = Value.Errors(ReferenceFile, document)[0];
    throw new ReferenceDataError(file, `${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`);
  }
  const data = document;
  unique(data.currencies, (c) => c.code, 'currency code', file);
  unique(data.currencies, (c) => c.id, 'currency id', file);
  unique(data.markets, (m) => m.id, 'market id', file);
  const byCode = new Map(data.currencies.map((c) => [c.code, c]));
  const ledgerOf = (c: CurrencyFile): number => c.ledger_precision ?? c.precision.real;
  for (const currency of data.currencies) {
    if (ledgerOf(currency) < currency.precision.real) {
      throw new ReferenceDataError(
        file,
        `currency ${currency.code}: ledger_precision is below precision.real`,
      );
    }
  }
  const need = (code: string, where: string): CurrencyFile => {
    const currency = byCode.get(code);
    if (!currency) throw new ReferenceDataError(file, `${where} names unknown currency "${code}"`);
    return currency;
  };
  for (const market of data.markets) {
    const base = need(market.base_unit, `market ${market.id}`);
    const quote = need(market.quote_unit, `market ${market.id}`);
    if (market.base_precision > base.precision.real || market.quote_precision > quote.precision.real) {
      throw new ReferenceDataError(file, `market ${market.id} is more precise than its currencies`);
    }
    const needed = market.base_precision + market.quote_precision;
    if (ledgerOf(quote) < needed) {
      throw new ReferenceDataError(
        file,
        `currency ${quote.code} needs ledger_precision >= ${needed} for market ${market.id} (price * amount must settle exactly)`,
      );
    }
  }
  for (const currency of data.currencies) {
    const price = data.usd_prices[currency.code];
    if (price === undefined || /^0+(\.0+)?$/.test(price)) {
      throw new ReferenceDataError(file, `usd_prices needs a positive price for "${currency.code}"`);
    }
  }
  for (const target of data.rate_targets) need(target, 'rate_targets');
  for (const required of SPEC_RATE_TARGETS) {
    if (!data.rate_targets.includes(required))
      throw new ReferenceDataError(file, `rate_targets must include ${required}`);
  }
  const usd = (code: string): string => data.usd_prices[code] ?? '0';
  const asset = (amount: string, currency: string) => ({
    amount: Number(amount),
    currency,
    to_usd: multiplyDecimals(amount, usd(currency), 2),
  });
  const fees: FeeEntry[] = [
    ...data.fees.fiat.map((fee) => {
      const currency = need(fee.category, `fee ${fee.code}`);
      if (currency.coin) throw new ReferenceDataError(file, `fiat fee ${fee.code} names a coin`);
      return { ...fee };
    }),
    ...data.fees.coin.map((fee) => {
      need(fee.code, 'coin fee');
      const feeCurrency = fee.fee_currency ?? fee.code;
      need(feeCurrency, `coin fee ${fee.code}`);
      return {
        code: fee.code,
        category: 'coin' as const,
        deposit_fees: [],
        withdraw_fees: [{ type: 'fixed' as const, asset: asset(fee.withdraw_fee, feeCurrency) }],
        min_deposit: asset(fee.min_deposit, fee.code),
        min_withdraw: asset(fee.min_withdraw, fee.code),
      };
    }),
  ];
  const currencies: Currency[] = [...data.currencies]
    .sort((a, b) => a.sort_order - b.sort_order || a.id - b.id)
    .map(({ ledger_precision: _ledger, ...published }) => published);
  const published = new Map(currencies.map((c) => [c.code, c]));
  const rates = currencies.map((currency) => {
    const rate: ExchangeRate = { currency: currency.code };
    for (const target of data.rate_targets) {
      rate[target] = Number(divideDecimals(usd(currency.code), usd(target), 10));
    }
    return rate;
  });
  const markets = data.markets.map((market) => ({ ...market, price_change: 0 }));
  const marketById = new Map(data.markets.map((m) => [m.id, m]));
  return Object.freeze({
    currencies,
    markets,
    fees,
    rates,
    currency: (code: string) => published.get(code.toLowerCase()),
    ledgerPrecision: (code: string) => {
      const currency = byCode.get(code.toLowerCase());
      if (!currency) throw new Error(`unknown currency ${code}`);
      return ledgerOf(currency);
    },
    market: (id: string) => marketById.get(id.toLowerCase()),
  });
}

/** Reads and validates the YAML reference file; throws naming the file and the problem. */
export function loadReferenceData(file: string): ReferenceData {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ReferenceDataError(file, `cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new ReferenceDataError(file, `not valid YAML (${(error as Error).message.split('\n')[0]})`);
  }
  return buildReferenceData(document, file);
}
