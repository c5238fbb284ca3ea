import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import { fiatDepositRoutes } from '../routes/fiat-deposit.js';
import { fundSourceRoutes } from '../routes/fund-sources.js';
import { paygateCallbackRoutes } from '../routes/paygate-callback.js';
import { paygateReturnRoutes } from '../routes/paygate-return.js';
import type { FiatWithdrawals } from '../wallet/fiat-port.js';
import type { WithdrawalConfirmation } from '../wallet/wallet.js';
import { PaygateClient } from './client.js';
import type { FiatDeps } from './deps.js';
import { PayoutDispatcher, type PayoutDispatcherOptions } from './payouts.js';
import { fiatWithdrawals } from './withdrawals.js';

export interface FiatOptions extends PayoutDispatcherOptions {
  /**
   * The confirmation mail of a withdrawal (links with purpose 'withdrawal', whose handler is the
   * wallet's): the same object the wallet is given. Without it a request of an account with
   * `withdraw_confirmation` still waits for confirmation, but no mail is sent.
   */
  readonly confirmation?: WithdrawalConfirmation;
  /** How long a request waits for its confirmation when the links give no expiry. @default 3600000 */
  readonly confirmationTtlMs?: number;
}

export interface Fiat {
  readonly deps: FiatDeps;
  /** The port behind `POST /v3/auth/withdraw` for currencies with `coin: false`. */
  readonly withdrawals: FiatWithdrawals;
  readonly dispatcher: PayoutDispatcher;
}

/** Builds the fiat side (payment gateway) over the common route deps; no routes, no timers yet. */
export function createFiat(deps: RouteDeps, options: FiatOptions = {}): Fiat {
  const fiatDeps: FiatDeps = {
    ...deps,
    gateway: new PaygateClient(deps.paygate, deps.now),
    ...(options.log ? { log: options.log } : {}),
  };
  const dispatcher = new PayoutDispatcher(fiatDeps, options);
  const withdrawals = fiatWithdrawals(fiatDeps, {
    ...(options.confirmation ? { confirmation: options.confirmation } : {}),
    confirmationTtlMs: options.confirmationTtlMs ?? 3_600_000,
    queued: () => dispatcher.kick(),
  });
  return { deps: fiatDeps, withdrawals, dispatcher };
}

/** Registers the fiat routes and runs the payout dispatcher for the app's lifetime. Called once from app.ts. */
export function registerFiat(app: App, fiat: Fiat): void {
  fundSourceRoutes(app, fiat.deps);
  fiatDepositRoutes(app, fiat.deps);
  paygateCallbackRoutes(app, fiat.deps);
  paygateReturnRoutes(app, fiat.deps);
  app.addHook('onReady', async () => {
    fiat.dispatcher.start();
    // Requests left queued or sending by a previous run go out now rather than after a poll.
    fiat.dispatcher.kick();
  });
  app.addHook('onClose', async () => {
    await fiat.dispatcher.stop();
  });
}
