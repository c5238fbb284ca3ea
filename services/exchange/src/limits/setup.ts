import type { RequestLimitsConfig } from '../config.js';
import { MemoryLimiter } from './memory-limiter.js';
import type { RequestLimitsOptions } from './register.js';

/**
 * The request limits of the settings: services/ratelimit when `RATELIMIT_GRPC_URL` is set, else
 * in-process. grpc-js and the .proto files are loaded only in the first case (start-up time).
 */
export async function createRequestLimits(
  config: RequestLimitsConfig,
): Promise<RequestLimitsOptions | undefined> {
  if (!config.enabled) return undefined;
  if (!config.grpcTarget) {
    return { config: config.rules, limiter: new MemoryLimiter(), failureMode: config.failureMode };
  }
  const { GrpcLimiter } = await import('./grpc-limiter.js');
  const limiter = new GrpcLimiter({
    target: config.grpcTarget,
    domain: config.rules.domain,
    timeoutMs: config.timeoutMs,
  });
  return { config: config.rules, limiter, failureMode: config.failureMode };
}
