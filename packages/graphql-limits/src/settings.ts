import { DEFAULT_QUERY_LIMITS, type QueryLimits } from './limits.js';

/**
 * The limit settings, with one name and meaning in every service that reads them. Each service's
 * `config.ts` passes its environment and turns a `QueryLimitSettingError` into its own config error, so
 * a wrong value stops the start naming the setting.
 */

export class QueryLimitSettingError extends Error {
  override readonly name = 'QueryLimitSettingError';
}

const SETTINGS = [
  ['QUERY_MAX_DEPTH', 'maxDepth', 1, 1000],
  ['QUERY_MAX_BREADTH', 'maxBreadth', 1, 100_000],
  ['QUERY_MAX_COST', 'maxCost', 1, Number.MAX_VALUE],
  ['QUERY_MAX_TOKENS', 'maxTokens', 10, 10_000_000],
  ['QUERY_MAX_DIRECTIVES', 'maxDirectives', 0, 100_000],
  ['REQUEST_MAX_JSON_DEPTH', 'maxJsonDepth', 1, 10_000],
] as const;

export function parseQueryLimits(env: NodeJS.ProcessEnv): QueryLimits {
  const limits: Record<string, number> = { ...DEFAULT_QUERY_LIMITS };
  for (const [name, key, min, max] of SETTINGS) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new QueryLimitSettingError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
    }
    limits[key] = value;
  }
  return Object.freeze(limits as unknown as QueryLimits);
}
