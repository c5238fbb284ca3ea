/** The amount limits of a service, in minor units. */
export interface AmountLimits {
  readonly min: bigint;
  readonly max: bigint;
}

export type LimitCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'below_min' | 'above_max'; readonly limit: bigint };

/** Inclusive on both ends: `amount_min` and `amount_max` themselves are accepted. */
export function checkLimits(amount: bigint, limits: AmountLimits): LimitCheck {
  if (amount < limits.min) return { ok: false, reason: 'below_min', limit: limits.min };
  if (amount > limits.max) return { ok: false, reason: 'above_max', limit: limits.max };
  return { ok: true };
}
