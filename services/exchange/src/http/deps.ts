import type { AuthDeps } from '../auth/authenticate.js';
import type { PaygateConfig } from '../config.js';
import type { Database } from '../db/database.js';
import type { ActionLinks } from '../mail/links.js';
import type { Mailer } from '../mail/mailer.js';
import type { MarketStats } from '../market-stats/market-stats.js';
import type { OrderService } from '../orders/service.js';
import type { ReferenceData } from '../reference/load.js';
import type { FiatWithdrawals } from '../wallet/fiat-port.js';
import type { Wallet } from '../wallet/wallet.js';

/** What route modules need, wired by hand in app.ts. */
export interface RouteDeps {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly auth: AuthDeps;
  /** Order entry and the books (one single writer per market). */
  readonly orders: OrderService;
  /** Rolling 24 h statistics and committed books in memory (tickers, markets, book, depth). */
  readonly marketStats: MarketStats;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** Crypto deposits and withdrawals (src/wallet/); without it the wallet methods answer 503. */
  readonly wallet?: Wallet;
  /** Fiat withdrawals behind POST /v3/auth/withdraw (src/fiat/); without it they answer 503. */
  readonly fiatWithdrawals?: FiatWithdrawals;
  /** Outgoing mail (SMTP or the outbox folder). */
  readonly mailer: Mailer;
  /** Single-use confirm/cancel links; features register their handler with `links.handle`. */
  readonly links: ActionLinks;
  /** The payment gateway settings (fiat: merchant public keys of the account object, src/fiat/). */
  readonly paygate: PaygateConfig;
}
