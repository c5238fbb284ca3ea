import { type Static, Type } from 'typebox';

/** Shape of the gateway configuration file (`config/gateway.yaml`). */

const Id = Type.String({ pattern: '^[a-z][a-z0-9_]{1,47}$' });
const Currency = Type.String({ pattern: '^[A-Z]{3}$' });
// YAML numbers are accepted and read back through their decimal text (never float arithmetic).
const Decimal = Type.Union([Type.String({ pattern: '^\\d+(\\.\\d+)?$' }), Type.Number({ minimum: 0 })]);
const Texts = Type.Record(Type.String({ pattern: '^[a-z]{2}$' }), Type.String());

export const FieldFile = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z][a-z0-9_]{0,47}$' }),
    type: Type.String({ minLength: 1 }),
    label: Texts,
    hint: Texts,
    example: Type.Union([Type.String(), Type.Null()]),
    regexp: Type.String({ minLength: 1 }),
    required: Type.Boolean(),
    position: Type.Integer({ minimum: 0 }),
    check: Type.Optional(Type.Literal('luhn')),
  },
  { additionalProperties: false },
);

export const MerchantFile = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.String(),
    icon: Type.String(),
    website: Type.String(),
    test_mode: Type.Boolean(),
    public_keys: Type.Record(Currency, Type.String({ pattern: '^pk_[A-Za-z0-9_]{8,64}$' })),
    /** An http(s) URL, or a path on the gateway itself (`/try-it/callback`), resolved against its PUBLIC_URL. */
    callback_url: Type.String({ minLength: 1 }),
    return_url: Type.String({ minLength: 1 }),
    /**
     * A merchant for trying the gateway out: served only where its sandbox secret may serve (loopback,
     * no DATABASE_URL, or ALLOW_SANDBOX_SECRETS=true) and left out elsewhere instead of refusing the start.
     */
    sandbox_only: Type.Optional(Type.Boolean()),
    /** Used when PAYGATE_MERCHANT_SECRET_<ID> is unset; refused for a merchant not in test mode. */
    sandbox_secret: Type.Optional(Type.String({ minLength: 8 })),
    /** The fault-injecting sandbox for this merchant's callbacks (src/sandbox/faults.ts); test merchants only. */
    callback_faults: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const MethodFile = Type.Object(
  {
    category: Type.String({ minLength: 1 }),
    name: Texts,
    description: Type.String(),
    metadata: Type.Array(Type.Unknown()),
    position: Type.Integer({ minimum: 0 }),
    hide: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const ServiceFile = Type.Object(
  {
    method: Id,
    currency: Currency,
    flow: Type.Union([Type.Literal('hpp'), Type.Literal('payout')]),
    fields: Type.Array(FieldFile),
    amount_min: Decimal,
    amount_max: Decimal,
    fee: Type.Object(
      { rate: Decimal, fixed: Decimal, min: Decimal, max: Decimal },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** The hosted page's own inputs: the same `label` and `hint` per language as a service's fields. */
const PageField = Type.Object({ label: Texts, hint: Texts }, { additionalProperties: false });
export const PageFieldsFile = Type.Object(
  { card_number: PageField, expiry: PageField, cvc: PageField, code: PageField },
  { additionalProperties: false },
);

export const GatewayFile = Type.Object(
  {
    page_fields: PageFieldsFile,
    currencies: Type.Record(Currency, Type.Object({ precision: Type.Integer({ minimum: 0, maximum: 8 }) })),
    merchants: Type.Record(Id, MerchantFile),
    methods: Type.Record(Id, MethodFile),
    services: Type.Record(Id, ServiceFile),
  },
  { additionalProperties: false },
);

export type GatewayFile = Static<typeof GatewayFile>;
export type FieldFile = Static<typeof FieldFile>;
