import type { Database } from '@platform/sql-storage/database';
import type { Catalog } from '../catalog/catalog.js';
import type { CardProcessor } from '../processor/card.js';
import type { PayoutProcessor } from '../processor/payout.js';
import type { SecretBook } from '../secrets/book.js';
import type { UnsignedInvoiceLimit } from '../unsigned-limit/limit.js';

/** What the payment operations need, wired by hand in app.ts. */
export interface PaymentDeps {
  readonly db: Database;
  readonly catalog: Catalog;
  readonly cards: CardProcessor;
  readonly payoutProcessor: PayoutProcessor;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  readonly invoiceTtlMs: number;
  readonly payoutSettleMs: number;
  /** Cards a payer may try on one invoice before it fails (src/domain/card-attempts.ts). */
  readonly cardAttemptsMax: number;
  /** The gateway's public address, e.g. `http://127.0.0.1:3200`. */
  readonly publicUrl: string;
  /** Merchant secrets rotated at run time; without it the configured secret is the only one. */
  readonly secrets?: SecretBook;
  /** The per-address limit on invoices created without the merchant's signature (src/unsigned-limit/). */
  readonly unsignedInvoices: UnsignedInvoiceLimit;
}
