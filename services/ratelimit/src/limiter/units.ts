import { UNIT_NAMES } from '../proto/messages.js';

/** Window length in seconds per `RateLimitResponse.RateLimit.Unit` number (reference "Limits, keys and counting"). */
const DIVIDERS: readonly number[] = [0, 1, 60, 3600, 86400, 2592000, 31536000, 604800];

export const UNIT_SECOND = 1;

/** Seconds per window for a known unit; 0 for UNKNOWN or out of range. */
export function unitToDivider(unit: number): number {
  return DIVIDERS[unit] ?? 0;
}

/** Parses a config unit name case-insensitively; undefined for an unknown name or UNKNOWN. */
export function parseUnitName(name: string): number | undefined {
  const i = (UNIT_NAMES as readonly string[]).indexOf(name.toUpperCase());
  return i > 0 ? i : undefined;
}

/** Seconds until the fixed, epoch-aligned window containing `nowSeconds` ends. */
export function secondsUntilReset(unit: number, nowSeconds: number): number {
  const divider = unitToDivider(unit);
  return divider - (nowSeconds % divider);
}
