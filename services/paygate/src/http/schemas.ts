import { Type } from 'typebox';

/** The one error shape of the service (see errors.ts). */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: 'numeric code' }),
      name: Type.String({ description: 'stable machine-readable name, e.g. invalid_field' }),
      message: Type.String(),
      field: Type.Optional(Type.String({ description: 'the input at fault, when one is' })),
    }),
  },
  { $id: 'ErrorResponse', description: 'error' },
);

export const errorResponses = {
  '4xx': Type.Ref('ErrorResponse'),
  '5xx': Type.Ref('ErrorResponse'),
};

/** A JSON number or a decimal string: clients send amounts both ways (spec: number). */
export const AmountInput = Type.Union([Type.Number(), Type.String({ maxLength: 32 })], {
  description: 'amount in the currency units, e.g. 500 or "500.00"',
});
