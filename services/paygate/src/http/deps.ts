import type { PaymentDeps } from '../payments/deps.js';

/** What route modules need, wired by hand in app.ts. */
export interface RouteDeps extends PaymentDeps {
  /** Largest accepted difference between a merchant request's timestamp and server time. */
  readonly signatureWindowSeconds: number;
}
