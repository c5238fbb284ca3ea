import { type Static, Type } from 'typebox';

/** Shape of the reference-data YAML file (see `config/reference.yaml`). */

const Code = Type.String({ pattern: '^[a-z0-9]{2,12}$' });
const Decimal = Type.String({ pattern: '^\\d+(\\.\\d+)?$' });

export const CurrencyFile = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    code: Code,
    name: Type.String({ minLength: 1 }),
    has_memo: Type.Boolean(),
    coin: Type.Boolean(),
    explorer_link: Type.String(),
    sort_order: Type.Integer(),
    icons: Type.Object(
      { std: Type.String(), xl: Type.String(), png_2x: Type.String(), png_3x: Type.String() },
      { additionalProperties: false },
    ),
    precision: Type.Object(
      { real: Type.Integer({ minimum: 0, maximum: 18 }), trade: Type.Integer({ minimum: 0, maximum: 18 }) },
      { additionalProperties: false },
    ),
    /**
     * Decimals of the ledger's minor units (not published). At least `precision.real`, and for a
     * quote currency at least base_precision + quote_precision of each of its markets, so that
     * price * amount settles exactly. @default precision.real
     */
    ledger_precision: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 })),
  },
  { additionalProperties: false },
);

export const MarketFile = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9]{4,24}$' }),
    base_unit: Code,
    quote_unit: Code,
    base_precision: Type.Integer({ minimum: 0, maximum: 18 }),
    quote_precision: Type.Integer({ minimum: 0, maximum: 18 }),
    display_precision: Type.Integer({ minimum: 0, maximum: 18 }),
    /** Maker fee in parts per million of what the maker receives; the service default when absent. */
    maker_fee_ppm: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    /** Taker fee in parts per million of what the taker receives; the service default when absent. */
    taker_fee_ppm: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);

export const FIAT_METHODS = [
  'advcash_wallet',
  'payeer',
  'perfectmoney_account',
  'perfectmoney_transfer',
  'svc_code',
  'payment_card',
] as const;

const FiatFee = Type.Object(
  { type: Type.String({ minLength: 1 }), amount: Decimal },
  { additionalProperties: false },
);

export const FiatFeeFile = Type.Object(
  {
    code: Type.Union(FIAT_METHODS.map((method) => Type.Literal(method))),
    category: Code,
    deposit_fees: Type.Array(FiatFee),
    withdraw_fees: Type.Array(FiatFee),
  },
  { additionalProperties: false },
);

export const CoinFeeFile = Type.Object(
  {
    code: Code,
    /** Fixed withdrawal fee, charged in `fee_currency` (default: the currency itself). */
    withdraw_fee: Decimal,
    fee_currency: Type.Optional(Code),
    min_deposit: Decimal,
    min_withdraw: Decimal,
  },
  { additionalProperties: false },
);

export const ReferenceFile = Type.Object(
  {
    currencies: Type.Array(CurrencyFile, { minItems: 1 }),
    markets: Type.Array(MarketFile),
    fees: Type.Object(
      { fiat: Type.Array(FiatFeeFile), coin: Type.Array(CoinFeeFile) },
      { additionalProperties: false },
    ),
    /** Price of one unit of each currency in USD, as decimal strings. */
    usd_prices: Type.Record(Code, Decimal),
    /** Currencies every exchange-rate object is quoted in (the spec names usd, uah, btc, eur, rub). */
    rate_targets: Type.Array(Code, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type CurrencyFile = Static<typeof CurrencyFile>;
export type MarketFile = Static<typeof MarketFile>;
export type FiatFeeFile = Static<typeof FiatFeeFile>;
export type CoinFeeFile = Static<typeof CoinFeeFile>;
export type ReferenceFile = Static<typeof ReferenceFile>;
