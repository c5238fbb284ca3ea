/**
 * The request limits of the exchange (`config/limits.yaml`, setting `RATE_LIMITS_FILE`): which
 * routes, counted per what, how many requests per window. Pure types and constants; the file format
 * is parsed in limits-file.ts.
 */

/** Private routes need an API key (v3 `svc-*` headers or v2 `access_key`); every other route is public. */
export type RouteClass = 'public' | 'private';

/**
 * What a rule counts by: `address` is the client address (the socket address, or the address a
 * trusted proxy forwarded, see `TRUSTED_PROXIES`), checked before authentication; `key` is the
 * authenticated API key, checked after authentication and only on private routes.
 */
export type Subject = 'address' | 'key';

/**
 * Window units, those of services/ratelimit (Envoy's `RateLimitUnit`). Windows are fixed and aligned
 * to the Unix epoch (`windowStart = floor(now / unit) * unit`), as the service counts them, so the
 * in-process limiter and the service decide alike.
 */
export type Unit = 'second' | 'minute' | 'hour' | 'day';

export const UNIT_SECONDS: Readonly<Record<Unit, number>> = Object.freeze({
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
});

export interface LimitRule {
  /** Unique name; the descriptor value sent to services/ratelimit (`rule=<name>`). */
  readonly name: string;
  readonly routes: RouteClass;
  readonly per: Subject;
  readonly unit: Unit;
  /** Requests allowed per subject and window (1..4294967295). */
  readonly requestsPerUnit: number;
}

export interface LimitsConfig {
  /** The services/ratelimit domain of the rules. @default 'exchange' */
  readonly domain: string;
  readonly rules: readonly LimitRule[];
  /**
   * Route URLs (as registered, e.g. `/health`, `/v3/book/:symbol`) that are never limited; a trailing
   * `*` matches any suffix (`/docs*`).
   */
  readonly exempt: readonly string[];
}

/** The rules that apply to a request of `routes` counted per `per`. */
export function rulesFor(config: LimitsConfig, routes: RouteClass, per: Subject): readonly LimitRule[] {
  return config.rules.filter((rule) => rule.routes === routes && rule.per === per);
}

/** Is the route `url` (its registered pattern) exempt from every limit? */
export function isExempt(config: LimitsConfig, url: string): boolean {
  return config.exempt.some((pattern) =>
    pattern.endsWith('*') ? url.startsWith(pattern.slice(0, -1)) : url === pattern,
  );
}
