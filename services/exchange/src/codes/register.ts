import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import { DEFAULT_FAILURE_LIMITS, type FailureLimits } from './limits.js';
import { transferCodeRoutes } from './routes.js';
import { TransferCodes } from './service.js';

export interface TransferCodeOptions {
  /** Brute-force limits of redemptions. @default DEFAULT_FAILURE_LIMITS */
  readonly limits?: FailureLimits;
}

/** Wires transfer codes into the app (one call from app.ts): the service and its routes. */
export function registerTransferCodes(
  app: App,
  deps: RouteDeps,
  options: TransferCodeOptions = {},
): TransferCodes {
  const codes = new TransferCodes({
    db: deps.db,
    secretBox: deps.auth.secretBox,
    limits: options.limits ?? DEFAULT_FAILURE_LIMITS,
    now: deps.now,
  });
  transferCodeRoutes(app, deps, codes);
  return codes;
}
