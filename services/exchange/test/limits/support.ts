import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/typed.js';
import type { RequestLimiter } from '../../src/limits/limiter.js';
import { parseLimits } from '../../src/limits/limits-file.js';
import type { FailureMode } from '../../src/limits/register.js';
import type { LimitsConfig } from '../../src/limits/rules.js';
import { reference, secretBox } from '../support/targets.js';

/** Small limits, so a few requests reach them. */
export const SMALL_LIMITS: LimitsConfig = (() => {
  const parsed = parseLimits(`
domain: exchange-test
rules:
  - { name: public-address, routes: public, per: address, unit: minute, requests_per_unit: 3 }
  - { name: private-address, routes: private, per: address, unit: minute, requests_per_unit: 6 }
  - { name: private-key, routes: private, per: key, unit: minute, requests_per_unit: 2 }
exempt: [/health, /docs*]
`);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.config;
})();

export function appWithLimits(
  db: Database,
  limiter: RequestLimiter,
  options: { failureMode?: FailureMode; trustedProxies?: string[]; config?: LimitsConfig } = {},
): Promise<App> {
  return buildApp({
    db,
    reference,
    secretBox,
    limits: { config: options.config ?? SMALL_LIMITS, limiter, failureMode: options.failureMode ?? 'open' },
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
  });
}
