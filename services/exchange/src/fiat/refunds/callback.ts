import type { Database } from '../../db/database.js';
import type { ReferenceData } from '../../reference/load.js';
import type { Applied } from '../callbacks.js';
import { ledgerAmount } from '../callbacks.js';
import type { CallbackBody } from '../gateway-types.js';
import { refundIdOf } from './entries.js';
import { applyRefundState, recordUnsolicited, refundById } from './store.js';

/**
 * A refund callback. One the exchange started (`refund-<id>`, amount and currency matching) settles
 * or releases that refund; any other is recorded for the operator (`fiat unsolicited`) and
 * acknowledged, never applied to a balance: a refund the exchange did not debit first must not move
 * the owner's money behind the operator's back.
 */
export async function applyRefundCallback(
  db: Database,
  reference: ReferenceData,
  event: CallbackBody,
): Promise<Applied> {
  const id = refundIdOf(event.reference_id);
  const refund = id === undefined ? undefined : await refundById(db, id);
  if (!refund) {
    await recordUnsolicited(db, event);
    return { ok: true, outcome: 'unsolicited' };
  }
  if (
    refund.currency !== event.currency.toLowerCase() ||
    ledgerAmount(reference, refund.currency, event.amount) !== refund.amount
  ) {
    return {
      ok: false,
      error: 'callback_mismatch',
      message: `the refund (${event.amount} ${event.currency}) does not match refund ${refund.id}`,
    };
  }
  const outcome = await db.transaction((tx) => applyRefundState(tx, refund.id, event));
  if (outcome === 'conflict' || outcome === 'unknown') {
    return {
      ok: false,
      error: 'callback_mismatch',
      message: `refund ${event.status} contradicts refund ${refund.id}, which already ended; needs an operator`,
    };
  }
  return { ok: true, outcome };
}
