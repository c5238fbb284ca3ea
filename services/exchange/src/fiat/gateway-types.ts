import { type Static, Type } from 'typebox';

/**
 * Shapes the payment gateway answers with (gateway contract; spec "Gateway prerequest response").
 * Only what the exchange reads is required; other properties pass through. Amounts arrive as JSON
 * numbers or decimal strings and are read through their decimal text (src/fiat/rules.ts).
 */
const Amount = Type.Union([Type.Number(), Type.String()]);

export const ServiceField = Type.Object({
  key: Type.String(),
  type: Type.Optional(Type.String()),
  label: Type.Optional(Type.Record(Type.String(), Type.String())),
  hint: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  example: Type.Optional(Type.Unknown()),
  regexp: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  required: Type.Optional(Type.Boolean()),
  position: Type.Optional(Type.Number()),
  /** An extra check the gateway applies, e.g. "luhn" for card numbers. */
  check: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type ServiceField = Static<typeof ServiceField>;

export const ServiceFee = Type.Object({
  rate: Amount,
  fixed: Amount,
  min: Amount,
  max: Amount,
});
export type ServiceFee = Static<typeof ServiceFee>;

export const GatewayService = Type.Object({
  code: Type.String(),
  method: Type.String(),
  currency: Type.String(),
  flow: Type.Optional(Type.String()),
  fields: Type.Array(ServiceField),
  amount_min: Amount,
  amount_max: Amount,
  fee: ServiceFee,
});
export type GatewayService = Static<typeof GatewayService>;

export const Prerequest = Type.Object({
  data: Type.Object({
    currency: Type.String(),
    test_mode: Type.Optional(Type.Boolean()),
    services: Type.Record(Type.String(), GatewayService),
    methods: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    account: Type.Optional(Type.Unknown()),
  }),
});
export type Prerequest = Static<typeof Prerequest>;

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

export const Payout = Type.Object({
  id: Type.Union([Type.String(), Type.Number()]),
  reference_id: Type.String(),
  status: Type.String(),
  currency: Type.String(),
  amount: Amount,
  fee: Type.Optional(Amount),
  service: Type.String(),
  destination_masked: Nullable(Type.String()),
  failure_reason: Nullable(Type.String()),
});
export type Payout = Static<typeof Payout>;

export const Invoice = Type.Object({
  id: Type.Union([Type.String(), Type.Number()]),
  reference_id: Type.String(),
  status: Type.String(),
  currency: Type.String(),
  amount: Amount,
  fee: Type.Optional(Amount),
  service: Type.String(),
});
export type Invoice = Static<typeof Invoice>;

export const GatewayError = Type.Object({
  error: Type.Object({
    code: Type.Union([Type.String(), Type.Number()]),
    message: Type.String(),
    field: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
});

/** The body of a callback (gateway -> exchange). */
export const CallbackBody = Type.Object({
  event_id: Type.String({ minLength: 1, maxLength: 200, description: 'unique per event' }),
  object: Type.Union([Type.Literal('invoice'), Type.Literal('payout'), Type.Literal('refund')]),
  id: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Integer()], {
    description: "the gateway's id of the invoice or payout",
  }),
  reference_id: Type.String({ minLength: 1, maxLength: 200, description: 'our deposit or withdrawal id' }),
  status: Type.String({ minLength: 1, maxLength: 40 }),
  currency: Type.String({ minLength: 1, maxLength: 10 }),
  amount: Type.Union([Type.String({ maxLength: 60 }), Type.Number()]),
  fee: Type.Optional(Type.Union([Type.String({ maxLength: 60 }), Type.Number()])),
  service: Type.Optional(Type.String({ maxLength: 100 })),
  test_mode: Type.Optional(Type.Boolean()),
  occurred_at: Type.Optional(Type.String({ maxLength: 60 })),
  failure_reason: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  /** A refund's invoice (our deposit id). */
  invoice_reference_id: Type.Optional(Type.String({ maxLength: 200 })),
  /** The event's number among its object's events (1, 2, ...): a gap or a repeat shows. */
  sequence: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type CallbackBody = Static<typeof CallbackBody>;

export const Refund = Type.Object({
  id: Type.Union([Type.String(), Type.Number()]),
  reference_id: Type.String(),
  invoice_reference_id: Type.String(),
  status: Type.String(),
  currency: Type.String(),
  amount: Amount,
  failure_reason: Nullable(Type.String()),
});
export type Refund = Static<typeof Refund>;
