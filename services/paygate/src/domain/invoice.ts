/**
 * The invoice state machine (gateway-contract.md): `created` -> `processing` (a 3-D Secure step is
 * pending) -> `success` | `failed`; an unpaid invoice may also expire. A 3-D Secure step that ends
 * without payment while the payer has card attempts left (domain/card-attempts.ts) goes back from
 * `processing` to `created` for another card. Terminal states never change,
 * which is what makes a paid invoice unpayable twice.
 */
export type InvoiceStatus = 'created' | 'processing' | 'success' | 'failed' | 'expired';

const NEXT: Readonly<Record<InvoiceStatus, readonly InvoiceStatus[]>> = {
  created: ['processing', 'success', 'failed', 'expired'],
  processing: ['created', 'success', 'failed', 'expired'],
  success: [],
  failed: [],
  expired: [],
};

export function invoiceCanMove(from: InvoiceStatus, to: InvoiceStatus): boolean {
  return NEXT[from].includes(to);
}

export function invoiceIsTerminal(status: InvoiceStatus): boolean {
  return NEXT[status].length === 0;
}

/** An invoice still waiting for the payer expires once its time is up. */
export function invoiceHasExpired(status: InvoiceStatus, expiresAtMs: number, nowMs: number): boolean {
  return !invoiceIsTerminal(status) && nowMs >= expiresAtMs;
}

/** The outcome shown to the merchant's return URL: only `success` is a success. */
export function returnOutcome(status: InvoiceStatus): 'success' | 'failed' | 'pending' {
  if (status === 'success') return 'success';
  if (status === 'failed' || status === 'expired') return 'failed';
  return 'pending';
}
