import type { AuthDeps } from '../auth/authenticate.js';
import type { Database } from '../db/database.js';
import type { ActionLinks } from '../mail/links.js';
import type { Mailer } from '../mail/mailer.js';
import type { OrderService } from '../orders/service.js';
import type { ReferenceData } from '../reference/load.js';

/** What route modules need, wired by hand in app.ts. */
export interface RouteDeps {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly auth: AuthDeps;
  /** Order entry and the books (one single writer per market). */
  readonly orders: OrderService;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** Outgoing mail (SMTP or the outbox folder). */
  readonly mailer: Mailer;
  /** Single-use confirm/cancel links; features register their handler with `links.handle`. */
  readonly links: ActionLinks;
}
