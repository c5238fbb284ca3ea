import type { Currency } from '../reference/load.js';
import { createPendingDeposit } from '../wallet/deposit-store.js';
import { gatewayText, ledgerToReal } from './amounts.js';
import { depositService, type LookupFailure } from './catalogue.js';
import type { FiatDeps } from './deps.js';
import { checkLimits, type LimitCheck } from './rules.js';

export interface FiatDepositRequest {
  readonly accountId: number;
  readonly currency: Currency;
  /** Ledger minor units, already checked against the currency's decimals. */
  readonly amount: bigint;
  /** A deposit service code; the currency's default service without one. */
  readonly service?: string;
}

export type FiatDepositResult =
  | {
      ok: true;
      deposit: { id: number; service: string; amountText: string; publicKey: string };
    }
  | { ok: false; error: 'lookup'; failure: LookupFailure }
  | { ok: false; error: 'limits'; check: Extract<LimitCheck, { ok: false }> };

/**
 * Checks a fiat deposit against the deposit service (the gateway's payment prerequest: the service
 * exists, the amount is within its limits) and only then records it as pending, its provider the
 * service code. Nothing is recorded when a check fails.
 */
export async function createFiatDeposit(
  deps: FiatDeps,
  request: FiatDepositRequest,
): Promise<FiatDepositResult> {
  const { currency } = request;
  const found = await depositService(deps.gateway, currency.code, request.service);
  if (!found.ok) return { ok: false, error: 'lookup', failure: found };
  const real = ledgerToReal(deps.reference, currency, request.amount);
  const limits = checkLimits(real, found.service, currency.precision.real);
  if (!limits.ok) return { ok: false, error: 'limits', check: limits };
  const deposit = await deps.db.transaction((tx) =>
    createPendingDeposit(tx, {
      accountId: request.accountId,
      currency: currency.code,
      amount: request.amount,
      provider: found.service.code,
    }),
  );
  return {
    ok: true,
    deposit: {
      id: deposit.id,
      service: found.service.code,
      amountText: gatewayText(currency, real),
      publicKey: deps.gateway.publicKey(currency.code) ?? '',
    },
  };
}
