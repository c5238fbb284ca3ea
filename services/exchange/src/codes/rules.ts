/**
 * Status rules of transfer codes (pure): which redemptions and which operator or owner actions a code
 * allows in which status. The clock is an argument. See the README (Transfer codes) for the diagram.
 */

export const CODE_STATUSES = [
  'created',
  'processing',
  'unconfirmed',
  'active',
  'redeeming',
  'redeemed',
  'onhold',
  'canceled',
] as const;
export type CodeStatus = (typeof CODE_STATUSES)[number];

/** Statuses whose amount is still held in escrow. */
export const LIVE_STATUSES: readonly CodeStatus[] = ['unconfirmed', 'active', 'onhold'];

/** Why a redemption was refused; `not_found` is the only one counted as a guess. */
export type RedeemRefusal =
  | 'not_found'
  | 'currency_mismatch'
  | 'already_redeemed'
  | 'canceled'
  | 'on_hold'
  | 'unconfirmed'
  | 'not_refundable_yet'
  | 'wrong_recipient';

export interface RedeemableCode {
  readonly status: CodeStatus;
  readonly ownerId: number;
  readonly currency: string;
  /** svcid of the only account that may redeem it, or `all`. */
  readonly recipient: string;
  readonly nonRefundableBefore: number;
}

export interface Redeemer {
  readonly accountId: number;
  readonly svcid: string;
}

/**
 * May `redeemer` redeem `code` at `now`, presented with `currencyToken` (the suffix of the code as
 * typed)? The owner takes a code back by redeeming it, but not before `non_refundable_before`; the
 * owner may do so whatever the recipient.
 */
export function redeemRefusal(
  code: RedeemableCode,
  redeemer: Redeemer,
  currencyToken: string,
  now: number,
): RedeemRefusal | undefined {
  if (currencyToken.toLowerCase() !== code.currency) return 'currency_mismatch';
  switch (code.status) {
    case 'redeemed':
    case 'redeeming':
      return 'already_redeemed';
    case 'canceled':
      return 'canceled';
    case 'onhold':
      return 'on_hold';
    case 'unconfirmed':
    case 'created':
    case 'processing':
      return 'unconfirmed';
    case 'active':
      break;
  }
  if (redeemer.accountId === code.ownerId) {
    return now < code.nonRefundableBefore ? 'not_refundable_yet' : undefined;
  }
  if (code.recipient !== 'all' && code.recipient !== redeemer.svcid) return 'wrong_recipient';
  return undefined;
}

/**
 * `hold`, `release`, `cancel`: operator actions; `confirm`: the owner's confirmation link; `decline`:
 * the owner's cancel link, or the confirmation links expiring unused (an unconfirmed code only).
 */
export type CodeAction = 'hold' | 'release' | 'cancel' | 'confirm' | 'decline';

export type Transition =
  | {
      readonly ok: true;
      readonly status: CodeStatus;
      /** The status to remember for a later release (hold only). */
      readonly heldFrom: 'unconfirmed' | 'active' | null;
      /** The escrowed amount goes back to the owner (cancel). */
      readonly refund: boolean;
    }
  | { readonly ok: false; readonly detail: string };

/**
 * Operator actions (hold, release, cancel) and the owner's e-mail confirmation (confirm; a cancel
 * link is `cancel`). A code on hold is released to the status it was held from.
 */
export function transition(
  status: CodeStatus,
  heldFrom: 'unconfirmed' | 'active' | null,
  action: CodeAction,
): Transition {
  const refuse = (why: string): Transition => ({
    ok: false,
    detail: `cannot ${action} a code that is ${why}`,
  });
  switch (action) {
    case 'hold':
      if (status === 'active' || status === 'unconfirmed') {
        return { ok: true, status: 'onhold', heldFrom: status, refund: false };
      }
      return refuse(status);
    case 'release':
      if (status === 'onhold' && heldFrom)
        return { ok: true, status: heldFrom, heldFrom: null, refund: false };
      return refuse(`${status}, not onhold`);
    case 'cancel':
      if (status === 'active' || status === 'unconfirmed' || status === 'onhold') {
        return { ok: true, status: 'canceled', heldFrom: null, refund: true };
      }
      return refuse(status);
    case 'confirm':
      if (status === 'unconfirmed') return { ok: true, status: 'active', heldFrom: null, refund: false };
      return refuse(`${status}, not unconfirmed`);
    case 'decline':
      // Not from onhold: a code under suspicion is settled by an operator, not by its owner's link.
      if (status === 'unconfirmed') return { ok: true, status: 'canceled', heldFrom: null, refund: true };
      return refuse(`${status}, not unconfirmed`);
  }
}
