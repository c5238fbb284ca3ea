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

/** An amount read for a service's currency, not yet checked against the service's limits. */
export interface ServiceAmount {
  readonly minor: bigint;
  readonly precision: number;
  /** The decimal with the currency's decimals, e.g. "500.00". */
  readonly text: string;
}

/** Parses an amount in a service's currency; an ApiError naming `amount` when it is none. */
export function serviceAmount(catalog: Catalog, service: Service, input: unknown): ServiceAmount {
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
  return { minor: parsed.minor, precision, text: formatMinor(parsed.minor, precision) };
}

/** Checks a parsed amount against the service's limits and prices its fee; ApiErrors name `amount`. */
export function priceServiceAmount(service: Service, parsed: ServiceAmount): PricedAmount {
  const { minor, precision } = parsed;
  const limits = checkLimits(minor, service.limits);
  if (!limits.ok) {
    const bound = `${formatMinor(limits.limit, precision)} ${service.currency}`;
    throw new ApiError(
      'amount_out_of_limits',
      limits.reason === 'below_min' ? `amount must be at least ${bound}` : `amount must be at most ${bound}`,
      'amount',
    );
  }
  const fee = computeFee(minor, service.fee, precision);
  return {
    amount: minor,
    fee,
    precision,
    text: {
      amount: parsed.text,
      fee: formatMinor(fee, precision),
      total: formatMinor(minor + fee, precision),
    },
  };
}

/** Parses an amount for a service, checks its limits and prices its fee; ApiErrors name `amount`. */
export function priceAmount(catalog: Catalog, service: Service, input: unknown): PricedAmount {
  return priceServiceAmount(service, serviceAmount(catalog, service, input));
}
