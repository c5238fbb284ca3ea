/**
 * What a request carrying an `Idempotency-Key` does, given what is stored under the key (pure: the
 * stored row and the clock come in as arguments). Stripe's rules: the first answer under a key is
 * replayed to a retry with the same parameters; other parameters under the same key are a conflict;
 * a retry while the first request still runs is a conflict too (the client retries later).
 */
export interface StoredKey {
  readonly route: string;
  readonly fingerprint: string;
  /** Null while the first request runs. */
  readonly status: number | null;
  readonly lockedUntilMs: number;
  readonly expiresAtMs: number;
}

export type KeyDecision =
  /** Nothing (live) under the key, or a first request that died holding it: this request runs. */
  | { readonly kind: 'run' }
  | { readonly kind: 'replay' }
  | { readonly kind: 'reused' }
  | { readonly kind: 'in_use' };

export function decideKey(
  stored: StoredKey | undefined,
  request: { route: string; fingerprint: string },
  nowMs: number,
): KeyDecision {
  if (!stored || stored.expiresAtMs <= nowMs) return { kind: 'run' };
  if (stored.route !== request.route || stored.fingerprint !== request.fingerprint) return { kind: 'reused' };
  if (stored.status !== null) return { kind: 'replay' };
  // The first request's process died (or took far too long): a retry may take the key over.
  return stored.lockedUntilMs <= nowMs ? { kind: 'run' } : { kind: 'in_use' };
}

/** A key is 1-255 visible ASCII characters (Stripe allows 255). */
export function isValidKey(key: string): boolean {
  return /^[\x21-\x7e]{1,255}$/.test(key);
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same parameters. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
