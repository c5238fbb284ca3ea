import { background } from '../cluster/background.js';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import { registerHistorySource } from '../wallet/history.js';
import { confirmationRequest, expireUnconfirmed, registerLinkHandler } from './confirmation.js';
import { CODE_HISTORY_SOURCES } from './history.js';
import { DEFAULT_FAILURE_LIMITS, type FailureLimits } from './limits.js';
import { transferCodeRoutes } from './routes.js';
import { TransferCodes } from './service.js';

export interface TransferCodeOptions {
  /** Brute-force limits of redemptions. @default DEFAULT_FAILURE_LIMITS */
  readonly limits?: FailureLimits;
  /** How often unconfirmed codes whose links expired are cancelled. @default 60000 ms */
  readonly sweepEveryMs?: number;
}

/**
 * Wires transfer codes into the app (one call from app.ts): the service, its routes, the handler of
 * the owner's confirmation links, the assets-history sources and the sweeper that cancels codes left
 * unconfirmed.
 */
export function registerTransferCodes(
  app: App,
  deps: RouteDeps,
  options: TransferCodeOptions = {},
): TransferCodes {
  const confirmationDeps = {
    db: deps.db,
    links: deps.links,
    mailer: deps.mailer,
    reference: deps.reference,
    now: deps.now,
  };
  const codes = new TransferCodes({
    db: deps.db,
    secretBox: deps.auth.secretBox,
    limits: options.limits ?? DEFAULT_FAILURE_LIMITS,
    now: deps.now,
    requestConfirmation: confirmationRequest(confirmationDeps),
  });
  registerLinkHandler(codes, confirmationDeps);
  for (const source of CODE_HISTORY_SOURCES) registerHistorySource(source);
  transferCodeRoutes(app, deps, codes);
  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    // In a cluster one node expires codes at a time (src/cluster/background.ts).
    if (!background.mayRun('code-expiry')) return;
    sweeping = expireUnconfirmed(codes, confirmationDeps).catch((error: unknown) => {
      app.log.error({ err: error }, 'expiring unconfirmed transfer codes failed');
    });
  }, options.sweepEveryMs ?? 60_000);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await sweeping;
  });
  return codes;
}
