import type { Database } from '../../db/database.js';
import type { ReferenceData } from '../../reference/load.js';
import { depositById } from '../../wallet/deposit-store.js';
import { FundsRefused } from '../../wallet/post.js';
import { gatewayText, ledgerToReal } from '../amounts.js';
import { describeFailure, type PaygateClient } from '../client.js';
import { refundReference } from './entries.js';
import {
  applyRefundState,
  createRefund,
  type FiatRefund,
  refundById,
  refundOfDeposit,
  releaseRefund,
} from './store.js';

export type RefundStart =
  | { readonly ok: true; readonly refund: FiatRefund; readonly gateway: string }
  | { readonly ok: false; readonly reason: string };

/**
 * The operator refunds a credited fiat deposit in full. The owner's balance is debited first: the
 * amount moves to locked in the transaction that records the refund (refused, nothing recorded,
 * when the available balance no longer covers it). Then the gateway is asked to refund the invoice;
 * its answer or callback settles the locked amount, or gives it back if the refund fails or is
 * refused. Running the command again for the same deposit resumes that refund (the gateway answers
 * the existing one for our reference), so a crash between the steps loses nothing and pays nothing twice.
 */
export async function refundFiatDeposit(
  deps: { db: Database; reference: ReferenceData; gateway: PaygateClient },
  depositId: number,
): Promise<RefundStart> {
  const deposit = await depositById(deps.db, depositId);
  if (!deposit || deposit.provider === null) return { ok: false, reason: `no fiat deposit ${depositId}` };
  if (deposit.status !== 'credited') {
    return {
      ok: false,
      reason: `deposit ${depositId} is ${deposit.status}; only a credited deposit is refunded`,
    };
  }
  const currency = deps.reference.currency(deposit.currency);
  if (!currency) return { ok: false, reason: `unknown currency ${deposit.currency}` };
  let refund = await refundOfDeposit(deps.db, depositId);
  if (!refund) {
    try {
      refund = await deps.db.transaction((tx) =>
        createRefund(tx, {
          depositId,
          accountId: deposit.accountId,
          currency: deposit.currency,
          amount: deposit.amount,
        }),
      );
    } catch (error) {
      if (error instanceof FundsRefused) {
        return {
          ok: false,
          reason: `refused: the available ${deposit.currency.toUpperCase()} balance of account ${deposit.accountId} no longer covers the deposit`,
        };
      }
      // Two operators at once: the other one's refund is the one to resume.
      refund = await refundOfDeposit(deps.db, depositId);
      if (!refund) throw error;
    }
  }
  if (refund.status !== 'sending') return { ok: true, refund, gateway: `already ${refund.status}` };
  const answer = await deps.gateway.createRefund({
    reference_id: refundReference(refund.id),
    invoice_reference_id: deposit.referenceId ?? String(deposit.id),
    amount: gatewayText(currency, ledgerToReal(deps.reference, currency, refund.amount)),
  });
  const id = refund.id;
  if (answer.ok) {
    await deps.db.transaction((tx) => applyRefundState(tx, id, answer.value));
    return { ok: true, refund: (await refundById(deps.db, id)) ?? refund, gateway: answer.value.status };
  }
  const { failure } = answer;
  if (failure.kind === 'refused' && [400, 404, 409, 422].includes(failure.status)) {
    // The gateway will not refund it (not paid, refunded already elsewhere): the owner keeps the funds.
    await deps.db.transaction(async (tx) => {
      const locked = await refundById(tx, id, true);
      if (locked) await releaseRefund(tx, locked, `refused by the gateway: ${failure.message}`);
    });
    return { ok: false, reason: `the gateway refused the refund: ${failure.message}; the funds are back` };
  }
  return {
    ok: false,
    reason: `the gateway did not answer (${describeFailure(failure)}); the funds stay locked, run the command again`,
  };
}
