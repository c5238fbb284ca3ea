import { parseDecimal } from '@platform/decimal-text/decimal-text';
import type { Database, Sql } from '../db/database.js';
import type { ReferenceData } from '../reference/load.js';
import { cancelDeposit, creditDeposit, depositById } from '../wallet/deposit-store.js';
import { withdrawalById } from '../wallet/withdrawal-store.js';
import { realToLedger } from './amounts.js';
import type { CallbackBody } from './gateway-types.js';
import { applyPayoutState } from './payouts.js';
import { applyRefundCallback } from './refunds/callback.js';

/** What the exchange did with one callback event (a value; the route turns failures into errors). */
export type CallbackOutcome =
  | {
      ok: true;
      outcome:
        | 'credited'
        | 'canceled'
        | 'settled'
        | 'released'
        | 'recorded'
        | 'ignored'
        | 'unsolicited'
        | 'duplicate';
    }
  | { ok: false; error: 'unknown_reference'; message: string }
  | { ok: false; error: 'callback_mismatch'; message: string };

export type Applied = Exclude<CallbackOutcome, { outcome: 'duplicate' }>;

/** The reference we gave the gateway: a deposit or withdrawal id as decimal text. */
export function referenceNumber(text: string): number | undefined {
  return /^[1-9]\d{0,9}$/.test(text) && Number(text) <= 2_147_483_647 ? Number(text) : undefined;
}

/** The callback's amount in ledger units of `currency`, or undefined if it is not an amount of it. */
export function ledgerAmount(
  reference: ReferenceData,
  code: string,
  amount: string | number,
): bigint | undefined {
  const currency = reference.currency(code);
  if (!currency) return undefined;
  // The one reader of request amounts (@platform/decimal-text): exact text, never a float.
  const parsed = parseDecimal(amount, currency.precision.real);
  return parsed.ok ? realToLedger(reference, currency, parsed.minor) : undefined;
}

/**
 * Whether a gateway invoice (a callback's, or a status answer's) is the deposit's: the same currency
 * and exactly the same amount. Anyone can create an invoice for any reference at the gateway with the
 * spec's unsigned body (services/paygate README "Unsigned invoices"), so an invoice is ours to apply
 * only when it asks for what the deposit is.
 */
export function invoiceIsDeposits(
  reference: ReferenceData,
  deposit: { readonly currency: string; readonly amount: bigint },
  invoice: { readonly currency: string; readonly amount: string | number },
): boolean {
  return (
    deposit.currency === invoice.currency.toLowerCase() &&
    ledgerAmount(reference, deposit.currency, invoice.amount) === deposit.amount
  );
}

async function alreadyApplied(db: Sql, event: CallbackBody): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM paygate_events WHERE object = $1 AND gateway_id = $2 AND event_id = $3',
    [event.object, String(event.id), event.event_id],
  );
  return rows.length > 0;
}

async function recordEvent(db: Sql, event: CallbackBody, outcome: string): Promise<void> {
  await db.query(
    `INSERT INTO paygate_events (object, gateway_id, event_id, reference_id, status, outcome, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) ON CONFLICT DO NOTHING`,
    [
      event.object,
      String(event.id),
      event.event_id,
      event.reference_id,
      event.status,
      outcome,
      JSON.stringify(event),
    ],
  );
}

/**
 * Applies one verified callback event. Idempotent twice over: an event already recorded is
 * acknowledged without being applied, and the money movements carry ledger idempotency keys
 * (`deposit-credit:<id>`, `withdrawal-settle:<id>`, `withdrawal-release:<id>`), so a deposit is
 * credited once and a withdrawal settled or released once whatever the gateway redelivers.
 */
export async function applyCallback(
  db: Database,
  reference: ReferenceData,
  event: CallbackBody,
): Promise<CallbackOutcome> {
  if (await alreadyApplied(db, event)) return { ok: true, outcome: 'duplicate' };
  const applied =
    event.object === 'invoice'
      ? await applyInvoice(db, reference, event)
      : event.object === 'refund'
        ? await applyRefundCallback(db, reference, event)
        : await applyPayout(db, reference, event);
  if (applied.ok) await recordEvent(db, event, applied.outcome);
  return applied;
}

async function applyInvoice(db: Database, reference: ReferenceData, event: CallbackBody): Promise<Applied> {
  const id = referenceNumber(event.reference_id);
  const deposit = id === undefined ? undefined : await depositById(db, id);
  // An invoice that is not one of our deposits (an unknown reference, or another amount or currency
  // than the deposit's): anyone can create one at the gateway (the spec's unsigned body). Its events
  // are recorded and acknowledged, so they are neither retried nor dead-lettered at the gateway, and
  // the deposit is left alone; only a paid one is refused, for an operator (money reached the
  // gateway for nothing we can credit: it is refunded there).
  if (!deposit || deposit.provider === null) {
    if (event.status !== 'success') return { ok: true, outcome: 'ignored' };
    return { ok: false, error: 'unknown_reference', message: `no fiat deposit "${event.reference_id}"` };
  }
  if (!invoiceIsDeposits(reference, deposit, event)) {
    if (event.status !== 'success') return { ok: true, outcome: 'ignored' };
    return {
      ok: false,
      error: 'callback_mismatch',
      message: `the invoice (${event.amount} ${event.currency}) does not match deposit ${deposit.id}`,
    };
  }
  // The gateway's id and the service the payer used, for the deposit's details.
  await db.query(
    `UPDATE deposits SET external_id = $2, provider = coalesce($3, provider),
            reference_id = coalesce(reference_id, $4), updated_at = now()
      WHERE id = $1 AND status = 'pending'`,
    [deposit.id, String(event.id), event.service ?? null, event.reference_id],
  );
  switch (event.status) {
    case 'success': {
      const credited = await creditDeposit(db, deposit.id);
      if (credited === 'credited' || credited === 'already_credited')
        return { ok: true, outcome: 'credited' };
      return {
        ok: false,
        error: 'callback_mismatch',
        message: `deposit ${deposit.id} is ${deposit.status}; a paid invoice needs an operator`,
      };
    }
    case 'failed':
    case 'expired':
      await cancelDeposit(db, deposit.id);
      return { ok: true, outcome: 'canceled' };
    default:
      return { ok: true, outcome: 'recorded' };
  }
}

async function applyPayout(db: Database, reference: ReferenceData, event: CallbackBody): Promise<Applied> {
  const id = referenceNumber(event.reference_id);
  const withdrawal = id === undefined ? undefined : await withdrawalById(db, id);
  if (withdrawal?.rail !== 'fiat') {
    return { ok: false, error: 'unknown_reference', message: `no fiat withdrawal "${event.reference_id}"` };
  }
  if (
    withdrawal.currency !== event.currency.toLowerCase() ||
    ledgerAmount(reference, withdrawal.currency, event.amount) !== withdrawal.amount
  ) {
    return {
      ok: false,
      error: 'callback_mismatch',
      message: `the payout (${event.amount} ${event.currency}) does not match withdrawal ${withdrawal.id}`,
    };
  }
  const outcome = await db.transaction((tx) =>
    applyPayoutState(tx, withdrawal.id, {
      id: event.id,
      status: event.status,
      failure_reason: event.failure_reason ?? null,
    }),
  );
  if (outcome === 'conflict') {
    return {
      ok: false,
      error: 'callback_mismatch',
      message: `payout ${event.status} contradicts withdrawal ${withdrawal.id}, which already ended; needs an operator`,
    };
  }
  return { ok: true, outcome };
}
