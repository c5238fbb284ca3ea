import type { SecretBox } from '../crypto/secret-box.js';
import { formatAmount } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import type { StoredCode } from './store.js';

/** The transfer code object of the spec, the same in every method. */
export interface CodeObject {
  id: number;
  sn: string;
  code: string;
  recipient: string;
  amount: string;
  currency: string;
  status: string;
  non_refundable_before: string;
  created_at: string;
  redeemed_at: string | null;
  comment: string;
  private_comment: string;
}

/**
 * Who is looking: the owner sees everything; the redeemer everything but the private comment (the
 * code, which they typed, included); the public check only currency, amount, status and times, with
 * `code` reduced to the public segment and the other fields blank (never the private segments, the
 * recipient or the comments).
 */
export type Viewer = 'owner' | 'redeemer' | 'public';

/** Associated data sealing a code: the row's public segment, so a box copied to another row fails. */
export const codeBoxAssociated = (publicSegment: string): string => `svc_code:${publicSegment}`;

export function codeObject(
  code: StoredCode,
  viewer: Viewer,
  box: SecretBox,
  reference: Pick<ReferenceData, 'ledgerPrecision'>,
): CodeObject {
  const hidden = viewer === 'public';
  return {
    id: hidden ? 0 : code.id,
    sn: hidden ? '' : code.sn,
    code: hidden ? code.publicSegment : box.open(code.codeBox, codeBoxAssociated(code.publicSegment)),
    recipient: hidden ? '' : code.recipient,
    amount: formatAmount(code.amount, reference.ledgerPrecision(code.currency)),
    currency: code.currency,
    status: code.status,
    non_refundable_before: code.nonRefundableBefore.toISOString(),
    created_at: code.createdAt.toISOString(),
    redeemed_at: code.redeemedAt ? code.redeemedAt.toISOString() : null,
    comment: hidden ? '' : code.comment,
    private_comment: viewer === 'owner' ? code.privateComment : '',
  };
}
