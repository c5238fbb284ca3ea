import { ApiError } from '../errors.js';
import type { LookupFailure } from './catalogue.js';
import type { FieldCheck, LimitCheck } from './rules.js';

/** The API error of a failed look-up (the routes' edge; details of an unavailable gateway go to the log). */
export function lookupError(failure: LookupFailure): ApiError {
  return new ApiError(failure.error, failure.message);
}

export function fieldError(check: Extract<FieldCheck, { ok: false }>): ApiError {
  return new ApiError('invalid_field', check.message);
}

export function limitError(check: Extract<LimitCheck, { ok: false }>): ApiError {
  return new ApiError('amount_out_of_limits', check.message);
}
