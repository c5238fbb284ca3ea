import { bool, type Env, integer } from '../settings/env.js';

/**
 * Settings of the Rate Limit Quota Service (RLQS), served on the gRPC listener next to
 * ShouldRateLimit. Parsed with the others at start-up (config.ts).
 */
export interface RlqsSettings {
  /** `RLQS_ENABLED`: serve `StreamRateLimitQuotas`. @default true */
  readonly enabled: boolean;
  /**
   * `RLQS_ASSIGNMENT_TTL_S`: `assignment_time_to_live` of every assignment, in whole seconds (Envoy
   * truncates to seconds), above Envoy's 5 s report interval; also how long a stream that stopped
   * reporting a bucket still takes a share of it. @default 15
   */
  readonly assignmentTtlSeconds: number;
  /**
   * `RLQS_ABANDON_AFTER_S`: a bucket a stream has reported no request for (allowed or denied)
   * during this long is abandoned on that stream (`AbandonAction`) and gives its share back.
   * @default 60
   */
  readonly abandonAfterSeconds: number;
  /** `RLQS_MAX_BUCKETS_PER_STREAM`: a stream reporting more is closed with RESOURCE_EXHAUSTED. @default 100000 */
  readonly maxBucketsPerStream: number;
  /**
   * `RLQS_MAX_BUCKETS`: buckets this server tracks over all its streams; a stream whose report
   * would add one more is closed with RESOURCE_EXHAUSTED (Envoy then applies its
   * `no_assignment_behavior` and opens a new stream). Many streams under the per-stream bound
   * would otherwise grow the heap until the process dies, for every stream. @default 1000000
   */
  readonly maxBuckets: number;
  /** `RLQS_MAX_STREAMS`: open streams on this server; one more is refused with RESOURCE_EXHAUSTED. @default 100000 */
  readonly maxStreams: number;
}

export function parseRlqsSettings(env: Env): RlqsSettings {
  return {
    enabled: bool(env, 'RLQS_ENABLED', true),
    assignmentTtlSeconds: integer(env, 'RLQS_ASSIGNMENT_TTL_S', 15, 6, 86_400),
    abandonAfterSeconds: integer(env, 'RLQS_ABANDON_AFTER_S', 60, 1, 86_400 * 30),
    maxBucketsPerStream: integer(env, 'RLQS_MAX_BUCKETS_PER_STREAM', 100_000, 1, 10_000_000),
    maxBuckets: integer(env, 'RLQS_MAX_BUCKETS', 1_000_000, 1, 100_000_000),
    maxStreams: integer(env, 'RLQS_MAX_STREAMS', 100_000, 1, 10_000_000),
  };
}
