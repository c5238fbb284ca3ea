import type { PaymentDeps } from '../payments/deps.js';
import type { SecretBook } from '../secrets/book.js';

/** What route modules need, wired by hand in app.ts. */
export interface RouteDeps extends PaymentDeps {
  /** Largest accepted difference between a merchant request's timestamp and server time. */
  readonly signatureWindowSeconds: number;
  /** Merchant secrets rotated at run time; without it the configured secret is the only one. */
  readonly secrets?: SecretBook;
}
