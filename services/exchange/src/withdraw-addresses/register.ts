import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import type { WithdrawAddressConfig } from './config.js';
import { entryMail, registerLinkHandler } from './confirmation.js';
import { addressBookGuard } from './guard.js';
import { withdrawAddressRoutes } from './routes.js';
import { WithdrawAddresses } from './service.js';

/**
 * Wires the withdrawal address book into the app (one call from app.ts): the book, its routes, the
 * handler of its e-mailed links, and the wallet's check of restricted withdrawals.
 */
export function registerWithdrawAddresses(
  app: App,
  deps: RouteDeps,
  config: WithdrawAddressConfig,
): WithdrawAddresses {
  const book = new WithdrawAddresses({
    db: deps.db,
    lockMs: config.lockMs,
    now: deps.now,
    mail: entryMail({ links: deps.links, mailer: deps.mailer, lockMs: config.lockMs }),
    log: app.log,
  });
  registerLinkHandler(book, deps.links);
  deps.wallet?.useDestinationGuard(addressBookGuard(book));
  withdrawAddressRoutes(app, deps, book);
  return book;
}
