import { type EdgeErrorName, type ErrorSpec, registrySpec } from '@platform/http-edge/edge-errors';

/**
 * The closed set of errors the gateway answers with. Every error body has one shape,
 * `{"error": {"code": <int>, "name": <string>, "message": <string>, "field"?: <string>}}`, the
 * exchange's shape plus `field` when one input is at fault (gateway-contract.md).
 * The edge's errors come first (`@platform/http-edge/edge-errors`, codes 1000-1013), then this service's own.
 */
export type ErrorName =
  | EdgeErrorName
  | 'unknown_public_key'
  | 'currency_mismatch'
  | 'unknown_service'
  | 'invalid_amount'
  | 'amount_out_of_limits'
  | 'invalid_field'
  | 'reference_conflict'
  | 'invoice_not_found'
  | 'payout_not_found'
  | 'unknown_merchant'
  | 'bad_signature'
  | 'stale_timestamp'
  | 'bad_form_signature'
  | 'form_expired'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'invalid_idempotency_key'
  | 'refund_not_found'
  | 'refund_exceeds_paid'
  | 'invoice_not_paid'
  | 'rate_limited';

export type { ErrorSpec } from '@platform/http-edge/edge-errors';

/** Maps each error to its numeric code and HTTP status: the edge's, then this service's own. */
export const errorSpec = registrySpec<ErrorName>(ownErrorSpec);

/** This service's own errors; the switch is exhaustive. */
function ownErrorSpec(name: Exclude<ErrorName, EdgeErrorName>): ErrorSpec {
  switch (name) {
    case 'unknown_public_key':
      return { code: 4001, status: 404 };
    case 'currency_mismatch':
      return { code: 4002, status: 400 };
    case 'unknown_service':
      return { code: 4003, status: 404 };
    case 'invalid_amount':
      return { code: 4004, status: 400 };
    case 'amount_out_of_limits':
      return { code: 4005, status: 422 };
    case 'invalid_field':
      return { code: 4006, status: 400 };
    case 'reference_conflict':
      return { code: 4007, status: 409 };
    case 'invoice_not_found':
      return { code: 4008, status: 404 };
    case 'payout_not_found':
      return { code: 4009, status: 404 };
    case 'unknown_merchant':
      return { code: 4010, status: 401 };
    case 'bad_signature':
      return { code: 4011, status: 401 };
    case 'stale_timestamp':
      return { code: 4012, status: 401 };
    case 'bad_form_signature':
      return { code: 4020, status: 401 };
    case 'form_expired':
      return { code: 4021, status: 401 };
    case 'idempotency_key_reused':
      return { code: 4101, status: 409 };
    case 'idempotency_key_in_use':
      return { code: 4102, status: 409 };
    case 'invalid_idempotency_key':
      return { code: 4103, status: 400 };
    case 'refund_not_found':
      return { code: 4104, status: 404 };
    case 'refund_exceeds_paid':
      return { code: 4105, status: 422 };
    case 'invoice_not_paid':
      return { code: 4106, status: 409 };
    case 'rate_limited':
      return { code: 4107, status: 429 };
  }
}

/** An expected failure crossing the HTTP edge; the error handler renders it. */
export class ApiError extends Error {
  readonly errorName: ErrorName;
  /** The input at fault, when there is one (`amount`, `service`, a field key). */
  readonly field: string | undefined;
  /** Whole seconds the client should wait (a 429's `retry-after` header), when there are some. */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    name: ErrorName,
    message: string,
    field?: string,
    options: { retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.errorName = name;
    this.field = field;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export interface ErrorBody {
  error: { code: number; name: ErrorName; message: string; field?: string };
}

export function errorBody(name: ErrorName, message: string, field?: string): ErrorBody {
  return { error: { code: errorSpec(name).code, name, message, ...(field ? { field } : {}) } };
}
