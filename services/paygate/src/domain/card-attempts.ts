/**
 * A card that does not pay (declined, insufficient funds, a 3-D Secure step failed or cancelled)
 * leaves the invoice open for another card, as Stripe Checkout does, until the payer has used
 * `max` attempts; then the invoice fails. The limit keeps one invoice from being a card-testing
 * oracle. Pure: the count is the invoice's, the limit the configuration's (`CARD_ATTEMPTS_MAX`).
 */
export type AttemptOutcome =
  | { readonly kind: 'retry'; readonly attempts: number; readonly left: number }
  | { readonly kind: 'fail'; readonly attempts: number };

export function afterFailedAttempt(attemptsBefore: number, max: number): AttemptOutcome {
  const attempts = attemptsBefore + 1;
  return attempts >= max ? { kind: 'fail', attempts } : { kind: 'retry', attempts, left: max - attempts };
}

/** Attempts the payer still has on an open invoice. */
export function attemptsLeft(attempts: number, max: number): number {
  return Math.max(0, max - attempts);
}
