import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import { fundSourceRoutes } from '../routes/fund-sources.js';
import { PaygateClient } from './client.js';
import type { FiatDeps } from './deps.js';

/**
 * Wires the fiat side (payment gateway) into the app: the gateway client and the fiat routes.
 * Called once from app.ts.
 */
export function registerFiat(app: App, deps: RouteDeps): FiatDeps {
  const fiat: FiatDeps = { ...deps, gateway: new PaygateClient(deps.paygate, deps.now) };
  fundSourceRoutes(app, fiat);
  return fiat;
}
