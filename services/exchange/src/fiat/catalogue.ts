import type { Currency, ReferenceData } from '../reference/load.js';
import { describeFailure, type GatewayFailure, type PaygateClient } from './client.js';
import type { GatewayService, Prerequest } from './gateway-types.js';

/** Why a fiat service could not be used: values, turned into API errors at the routes. */
export type LookupFailure =
  | { readonly ok: false; readonly error: 'fiat_only'; readonly message: string }
  | {
      readonly ok: false;
      readonly error: 'gateway_unavailable';
      readonly message: string;
      readonly detail: string;
    }
  | {
      readonly ok: false;
      readonly error: 'gateway_refused';
      readonly message: string;
      readonly field?: string;
    }
  | { readonly ok: false; readonly error: 'unknown_service'; readonly message: string };

export type ServiceLookup =
  | { readonly ok: true; readonly service: GatewayService; readonly testMode: boolean }
  | LookupFailure;

/** A fiat currency of the reference data (`coin: false`) with a merchant key at the gateway. */
export function fiatCurrency(
  reference: ReferenceData,
  client: PaygateClient,
  code: string,
): { ok: true; currency: Currency } | LookupFailure {
  const currency = reference.currency(code.toLowerCase());
  if (!currency || currency.coin || !client.publicKey(currency.code)) {
    return {
      ok: false,
      error: 'fiat_only',
      message: `"${code}" is not a fiat currency of the payment gateway`,
    };
  }
  return { ok: true, currency };
}

export function gatewayFailure(failure: GatewayFailure): LookupFailure {
  if (failure.kind === 'refused' && failure.status < 500) {
    return {
      ok: false,
      error: 'gateway_refused',
      message: `the payment gateway refused: ${failure.message}`,
      ...(failure.field ? { field: failure.field } : {}),
    };
  }
  return {
    ok: false,
    error: 'gateway_unavailable',
    message: 'the payment gateway is not available; try again later',
    detail: describeFailure(failure),
  };
}

function pick(prerequest: Prerequest, code: string | undefined): ServiceLookup {
  const services = Object.values(prerequest.data.services);
  const testMode = prerequest.data.test_mode ?? false;
  if (code === undefined) {
    // The default service: one without extra fields (a hosted page asks for everything), else the first.
    const service = services.find((s) => s.fields.length === 0) ?? services[0];
    if (!service)
      return {
        ok: false,
        error: 'unknown_service',
        message: 'the gateway offers no service for this currency',
      };
    return { ok: true, service, testMode };
  }
  const service = services.find((s) => s.code === code);
  if (!service) {
    const known = services.map((s) => s.code).join(', ') || 'none';
    return {
      ok: false,
      error: 'unknown_service',
      message: `unknown gateway service "${code}" (offered: ${known})`,
    };
  }
  return { ok: true, service, testMode };
}

/** The deposit service `code` of a currency (the default one without a code), from the payment prerequest. */
export async function depositService(
  client: PaygateClient,
  currency: string,
  code?: string,
): Promise<ServiceLookup> {
  const answer = await client.paymentPrerequest(currency);
  return answer.ok ? pick(answer.value, code) : gatewayFailure(answer.failure);
}

/** The payout service `code` for `amount` (decimal text) of a currency, from the payout prerequest. */
export async function payoutService(
  client: PaygateClient,
  currency: string,
  amount: string,
  code: string,
): Promise<ServiceLookup> {
  const answer = await client.payoutPrerequest(currency, amount);
  return answer.ok ? pick(answer.value, code) : gatewayFailure(answer.failure);
}
