import type { Catalog, Service } from '../catalog/catalog.js';
import { computeFee } from '../domain/fees.js';
import { checkLimits } from '../domain/limits.js';
import { formatMinor, parseAmount } from '../domain/money.js';
import { ApiError } from '../errors.js';

export interface PricedAmount {
  readonly amount: bigint;
  readonly fee: bigint;
  readonly precision: number;
  readonly text: { amount: string; fee: string; total: string };
}

/** Parses an amount for a service, checks its limits and prices its fee; ApiErrors name `amount`. */
export function priceAmount(catalog: Catalog, service: Service, input: unknown): PricedAmount {
  const precision = catalog.precision.get(service.currency) ?? 2;
  const parsed = parseAmount(input, precision);
  if (!parsed.ok) {
    const why =
      parsed.reason === 'too_many_decimals'
        ? `at most ${precision} decimals`
        : parsed.reason === 'not_positive'
          ? 'a positive amount'
          : 'a decimal number';
    throw new ApiError('invalid_amount', `amount must be ${why}`, 'amount');
  }
  const limits = checkLimits(parsed.minor, service.limits);
  if (!limits.ok) {
    const bound = `${formatMinor(limits.limit, precision)} ${service.currency}`;
    throw new ApiError(
      'amount_out_of_limits',
      limits.reason === 'below_min' ? `amount must be at least ${bound}` : `amount must be at most ${bound}`,
      'amount',
    );
  }
  const fee = computeFee(parsed.minor, service.fee, precision);
  return {
    amount: parsed.minor,
    fee,
    precision,
    text: {
      amount: formatMinor(parsed.minor, precision),
      fee: formatMinor(fee, precision),
      total: formatMinor(parsed.minor + fee, precision),
    },
  };
}
