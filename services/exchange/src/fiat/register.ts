import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import { mailConfirmation, WITHDRAWAL_LINK_PURPOSE } from '../wallet/confirmation-mail.js';
import type { FiatWithdrawals } from '../wallet/fiat-port.js';
import type { WithdrawalConfirmation } from '../wallet/wallet.js';
import { releaseWithdrawal, transitionWithdrawal } from '../wallet/withdrawal-store.js';
import { PaygateClient } from './client.js';
import { depositExpiryLoop } from './deposit-expiry.js';
import type { FiatDeps } from './deps.js';
import { fiatDepositRoutes } from './fiat-deposit.js';
import { fundSourceRoutes } from './fund-source-routes.js';
import { paygateCallbackRoutes } from './paygate-callback.js';
import { paygateReturnRoutes } from './paygate-return.js';
import { PayoutDispatcher, type PayoutDispatcherOptions } from './payouts.js';
import { fiatWithdrawals } from './withdrawals.js';

export interface FiatOptions extends PayoutDispatcherOptions {
  /**
   * The confirmation mail of a withdrawal (links with purpose 'withdrawal', whose handler is the
   * wallet's). @default the wallet's mail (`mailConfirmation` over the app's links and mailer)
   */
  readonly confirmation?: WithdrawalConfirmation;
  /** How long a request waits for its confirmation when the links give no expiry. @default 3600000 */
  readonly confirmationTtlMs?: number;
  /**
   * A fiat deposit with no invoice at the gateway is canceled after this long (src/fiat/deposit-expiry.ts).
   * @default the setting `PAYGATE_DEPOSIT_TTL_S` (7200 s) of the gateway config
   */
  readonly depositTtlMs?: number;
}

export interface Fiat {
  readonly deps: FiatDeps;
  /** The port behind `POST /v3/auth/withdraw` for currencies with `coin: false`. */
  readonly withdrawals: FiatWithdrawals;
  readonly dispatcher: PayoutDispatcher;
  readonly depositExpiry: ReturnType<typeof depositExpiryLoop>;
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
    confirmation: options.confirmation ?? mailConfirmation(deps.links, deps.mailer, deps.reference),
    confirmationTtlMs: options.confirmationTtlMs ?? 3_600_000,
    queued: () => dispatcher.kick(),
  });
  const depositExpiry = depositExpiryLoop(fiatDeps, options.depositTtlMs ?? deps.paygate.depositTtlS * 1_000);
  return { deps: fiatDeps, withdrawals, dispatcher, depositExpiry };
}

/** Registers the fiat routes and runs the payout dispatcher for the app's lifetime. Called once from app.ts. */
export function registerFiat(app: App, fiat: Fiat): void {
  fundSourceRoutes(app, fiat.deps);
  fiatDepositRoutes(app, fiat.deps);
  paygateCallbackRoutes(app, fiat.deps);
  paygateReturnRoutes(app, fiat.deps);
  if (!fiat.deps.wallet) {
    // The 'withdrawal' links are the wallet's (confirm: queued, cancel: funds released, for both
    // rails). An app without the wallet (crypto custody off) handles them the same way here.
    fiat.deps.links.handle(WITHDRAWAL_LINK_PURPOSE, async (tx, id, action) => {
      if (action === 'confirm') {
        const done = await transitionWithdrawal(tx, id, ['awaiting_confirmation'], 'queued');
        if (done) setImmediate(() => fiat.dispatcher.kick());
        return done
          ? { ok: true, message: `withdrawal ${id} confirmed; it will be sent shortly` }
          : { ok: false, message: `withdrawal ${id} is no longer waiting for confirmation` };
      }
      const released = await releaseWithdrawal(tx, id, 'canceled', null, ['awaiting_confirmation']);
      return released
        ? { ok: true, message: `withdrawal ${id} canceled; the funds are available again` }
        : { ok: false, message: `withdrawal ${id} is no longer waiting for confirmation` };
    });
  }
  app.addHook('onReady', async () => {
    fiat.dispatcher.start();
    fiat.depositExpiry.start();
    // Requests left queued or sending by a previous run go out now rather than after a poll.
    fiat.dispatcher.kick();
  });
  app.addHook('onClose', async () => {
    await fiat.dispatcher.stop();
    await fiat.depositExpiry.stop();
  });
}
