/** The payout state machine (gateway-contract.md): `processing` -> `success` | `failed`. */
export type PayoutStatus = 'processing' | 'success' | 'failed';

export function payoutCanMove(from: PayoutStatus, to: PayoutStatus): boolean {
  return from === 'processing' && (to === 'success' || to === 'failed');
}

/** A payout is settled by the processor once its settle time has come. */
export function payoutIsDue(status: PayoutStatus, settleAtMs: number, nowMs: number): boolean {
  return status === 'processing' && nowMs >= settleAtMs;
}
