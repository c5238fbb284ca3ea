/**
 * The refund state machine: `processing` (sent to the processor) -> `success` | `failed`. A failed
 * refund gives its amount back to what may still be refunded.
 */
export type RefundStatus = 'processing' | 'success' | 'failed';

export function refundCanMove(from: RefundStatus, to: RefundStatus): boolean {
  return from === 'processing' && (to === 'success' || to === 'failed');
}

export function refundIsDue(status: RefundStatus, settleAtMs: number, nowMs: number): boolean {
  return status === 'processing' && nowMs >= settleAtMs;
}

/** Whether a refund's amount counts against the invoice (a failed one does not). */
export function refundHoldsAmount(status: RefundStatus): boolean {
  return status !== 'failed';
}

export type RefundRoom =
  | { readonly ok: true; readonly remaining: bigint }
  | { readonly ok: false; readonly refundable: bigint };

/**
 * Whether `requested` (minor units) still fits in what was paid: never more than the invoice's
 * amount in total across its refunds in `processing` or `success`.
 */
export function refundRoom(paid: bigint, alreadyRefunded: bigint, requested: bigint): RefundRoom {
  const refundable = paid - alreadyRefunded;
  if (requested <= 0n || requested > refundable)
    return { ok: false, refundable: refundable < 0n ? 0n : refundable };
  return { ok: true, remaining: refundable - requested };
}
