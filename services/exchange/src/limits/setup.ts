import type { RequestLimitsConfig } from '../config.js';
import type { Sql } from '../db/database.js';
import { DatabaseLimiter } from './database-limiter.js';
import { MemoryLimiter } from './memory-limiter.js';
import type { RequestLimitsOptions } from './register.js';

/**
 * The request limits of the settings: services/ratelimit when `RATELIMIT_GRPC_URL` is set, else the
 * database's counters (`RATE_LIMITS_STORE=database`, the default on PostgreSQL) or this process's.
 * grpc-js and the .proto files are loaded only in the first case (start-up time).
 */
export async function createRequestLimits(
  config: RequestLimitsConfig,
  db: Sql,
): Promise<RequestLimitsOptions | undefined> {
  if (!config.enabled) return undefined;
  if (!config.grpcTarget) {
    const limiter = config.store === 'database' ? new DatabaseLimiter(db) : new MemoryLimiter();
    return { config: config.rules, limiter, failureMode: config.failureMode };
  }
  const { GrpcLimiter } = await import('./grpc-limiter.js');
  const limiter = new GrpcLimiter({
    target: config.grpcTarget,
    domain: config.rules.domain,
    timeoutMs: config.timeoutMs,
  });
  return { config: config.rules, limiter, failureMode: config.failureMode };
}
