import { randomBytes } from 'node:crypto';
import { payoutEvent } from '../callbacks/event.js';
import { enqueueCallback } from '../callbacks/outbox.js';
import type { Merchant, Service } from '../catalog/catalog.js';
import { validateFields } from '../domain/fields.js';
import { payoutIsDue } from '../domain/payout.js';
import { ApiError } from '../errors.js';
import {
  duePayoutIds,
  findPayout,
  findPayoutByReference,
  insertPayout,
  type Payout,
  settlePayout,
} from '../store/payouts.js';
import { priceAmount } from './amounts.js';
import type { PaymentDeps } from './deps.js';

export interface CreatePayoutInput {
  readonly referenceId: string;
  readonly service: string;
  readonly currency: string;
  readonly amount: string | number;
  readonly fields: Readonly<Record<string, unknown>>;
}

function payoutService(deps: PaymentDeps, code: string, currency: string): Service {
  const service = deps.catalog.services.get(code);
  if (service?.flow !== 'payout') {
    throw new ApiError('unknown_service', `no payout service "${code}"`, 'service');
  }
  if (service.currency !== currency.toUpperCase()) {
    throw new ApiError('currency_mismatch', `service ${code} pays out ${service.currency}`, 'currency');
  }
  return service;
}

/**
 * Validates the destination against the service's fields and limits, hands it to the payout
 * processor and records the payout as `processing` with its callback, in one transaction. The full
 * destination is never stored: only the processor's masked form and token. A repeated reference
 * answers the existing payout (`created: false`) when amount, currency and service match.
 */
export async function createPayout(
  deps: PaymentDeps,
  merchant: Merchant,
  input: CreatePayoutInput,
): Promise<{ payout: Payout; created: boolean }> {
  const service = payoutService(deps, input.service, input.currency);
  const priced = priceAmount(deps.catalog, service, input.amount);
  const existing = await findPayoutByReference(deps.db, merchant.id, input.referenceId);
  if (existing) return { payout: sameOrConflict(existing, service, priced.text.amount), created: false };
  const fields = validateFields(service.fields, input.fields);
  if (!fields.ok) throw new ApiError('invalid_field', fields.message, fields.field);
  const cardRule = service.fields.find((rule) => rule.check === 'luhn');
  const firstRule = service.fields[0];
  const destination = cardRule
    ? { kind: 'card' as const, number: fields.values[cardRule.key] ?? '' }
    : { kind: 'account' as const, value: firstRule ? (fields.values[firstRule.key] ?? '') : '' };
  const submission = deps.payoutProcessor.submit(destination);
  const now = new Date(deps.now());
  return deps.db.transaction(async (tx) => {
    const inserted = await insertPayout(tx, {
      id: `pay_${randomBytes(10).toString('hex')}`,
      merchantId: merchant.id,
      referenceId: input.referenceId,
      service: service.code,
      currency: service.currency,
      amount: priced.text.amount,
      fee: priced.text.fee,
      destinationMasked: submission.masked,
      processorToken: submission.token,
      pendingOutcome: submission.outcome,
      pendingReason: submission.reason,
      settleAt: new Date(now.getTime() + deps.payoutSettleMs),
      testMode: merchant.testMode,
      createdAt: now,
    });
    if (inserted) {
      await enqueueCallback(tx, merchant.id, payoutEvent(inserted), now);
      return { payout: inserted, created: true };
    }
    // Lost a race with the same reference: answer the winner.
    const winner = await findPayoutByReference(tx, merchant.id, input.referenceId);
    if (!winner) throw new Error('payout conflict without a row');
    return { payout: sameOrConflict(winner, service, priced.text.amount), created: false };
  });
}

function sameOrConflict(existing: Payout, service: Service, amount: string): Payout {
  if (
    existing.amount !== amount ||
    existing.service !== service.code ||
    existing.currency !== service.currency
  ) {
    throw new ApiError(
      'reference_conflict',
      `reference_id ${existing.referenceId} already has a payout of ${existing.amount} ${existing.currency} (${existing.service})`,
      'reference_id',
    );
  }
  return existing;
}

/** Settles the payouts whose processor outcome is due; returns how many. */
export async function settleDuePayouts(deps: PaymentDeps, limit = 50): Promise<number> {
  const ids = await duePayoutIds(deps.db, new Date(deps.now()), limit);
  for (const id of ids) {
    await deps.db.transaction(async (tx) => {
      const now = new Date(deps.now());
      const payout = await findPayout(tx, id, true);
      if (!payout || !payoutIsDue(payout.status, payout.settleAt.getTime(), now.getTime())) return;
      const settled = await settlePayout(
        tx,
        id,
        payout.pendingOutcome,
        payout.pendingOutcome === 'failed' ? (payout.pendingReason ?? 'processor_error') : null,
        now,
      );
      await enqueueCallback(tx, payout.merchantId, payoutEvent(settled), now);
    });
  }
  return ids.length;
}
