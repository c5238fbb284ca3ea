import { createRequire } from 'node:module';
import { join } from 'node:path';
import { RLQS_PROTO, RLQS_PROTO_DIR } from '@platform/ratelimit-proto/dir';
import protobuf from 'protobufjs';
import { encodeBucketId, encodeResponse } from './wire.js';

/**
 * The messages of Envoy's Rate Limit Quota Service (`envoy.service.rate_limit_quota.v3`), loaded
 * from Envoy's own `.proto` files (packages/ratelimit-proto/rlqs, unchanged copies), and the plain
 * shapes the quota service works with. Decoding never trusts the proto's validation rules: Envoy
 * itself sends `time_elapsed: 0s` against its own `gt` rule (ratelimit-reference.md, RLQS).
 */
export const RLQS_METHOD_PATH =
  '/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas';

const require = createRequire(import.meta.url);
/** The annotation files import descriptor.proto, which protobufjs ships but does not bundle. */
const DESCRIPTOR_PROTO = require.resolve('protobufjs/google/protobuf/descriptor.proto');

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (target === 'google/protobuf/descriptor.proto') return DESCRIPTOR_PROTO;
    return target.startsWith('google/protobuf/') ? target : join(RLQS_PROTO_DIR, target);
  };
  root.loadSync(RLQS_PROTO, { keepCase: true });
  root.resolveAll();
  return root;
}

const root = loadRoot();
export const UsageReportsType = root.lookupType(
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
);
export const QuotaResponseType = root.lookupType('envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse');
const AssignmentActionType = root.lookupType(
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction.QuotaAssignmentAction',
);

/** A bucket id: Envoy's `BucketId.bucket` map. */
export type BucketId = Readonly<Record<string, string>>;

export interface BucketUsage {
  /** The bucket_id message's bytes as Envoy sent them (latin1): the same bucket, the same bytes. */
  readonly wireId: string;
  /** The bucket id's map (decoded from `wireId` when read). */
  readonly bucketId: BucketId;
  /** `time_elapsed` in ms (0 when absent or 0s: Envoy's first report). */
  readonly timeElapsedMs: number;
  readonly allowed: number;
  readonly denied: number;
}

export interface UsageReports {
  readonly domain: string;
  readonly usages: readonly BucketUsage[];
}

/** The strategies Envoy applies (`requests_per_time_unit` is logged "not yet supported" and skipped). */
export type Strategy =
  | { readonly kind: 'allow_all' }
  | { readonly kind: 'deny_all' }
  | {
      readonly kind: 'token_bucket';
      readonly maxTokens: number;
      readonly tokensPerFill: number;
      /** Whole seconds (Envoy truncates to seconds). */
      readonly fillIntervalSeconds: number;
    };

export type BucketAction =
  | {
      readonly bucketId: BucketId;
      /** The bucket_id bytes to echo (Envoy's own, or their latin1 string); encoded from `bucketId` when absent. */
      readonly idBytes?: Uint8Array | string;
      readonly kind: 'assign';
      readonly strategy: Strategy;
      readonly ttlSeconds: number;
    }
  | { readonly bucketId: BucketId; readonly idBytes?: Uint8Array | string; readonly kind: 'abandon' };

const BLANKET = { allow_all: 0, deny_all: 1 } as const;

function wireStrategy(s: Strategy): object {
  if (s.kind === 'token_bucket') {
    return {
      token_bucket: {
        max_tokens: s.maxTokens,
        // Always set: Envoy reads an unset tokens_per_fill as 0, despite the proto's "default 1".
        tokens_per_fill: { value: s.tokensPerFill },
        fill_interval: { seconds: s.fillIntervalSeconds },
      },
    };
  }
  // A oneof member is written even when it is the enum's zero (ALLOW_ALL).
  return { blanket_rule: BLANKET[s.kind] };
}

/**
 * The encoded QuotaAssignmentAction of each strategy and TTL seen: most buckets of a response share
 * a few, so they are encoded once (bounded: cleared past 10,000 distinct ones).
 */
const assignmentBytes = new Map<string, Uint8Array>();

/**
 * The same, by the strategy object: the quota service hands out a few shared strategy objects
 * (assignment.ts caches one per rule and participant count), so most actions are found here
 * without building the string key above (10,000 of them on the tail of a 10,000-bucket answer).
 */
const byStrategy = new WeakMap<Strategy, { readonly ttlSeconds: number; readonly bytes: Uint8Array }>();

function encodedAssignment(strategy: Strategy, ttlSeconds: number): Uint8Array {
  const known = byStrategy.get(strategy);
  if (known !== undefined && known.ttlSeconds === ttlSeconds) return known.bytes;
  const bytes = encodedByKey(strategy, ttlSeconds);
  byStrategy.set(strategy, { ttlSeconds, bytes });
  return bytes;
}

function encodedByKey(strategy: Strategy, ttlSeconds: number): Uint8Array {
  const key =
    strategy.kind === 'token_bucket'
      ? `${ttlSeconds}/${strategy.maxTokens}/${strategy.tokensPerFill}/${strategy.fillIntervalSeconds}`
      : `${ttlSeconds}/${strategy.kind}`;
  let bytes = assignmentBytes.get(key);
  if (!bytes) {
    bytes = AssignmentActionType.encode({
      assignment_time_to_live: { seconds: ttlSeconds },
      rate_limit_strategy: wireStrategy(strategy),
    }).finish();
    if (assignmentBytes.size >= 10_000) assignmentBytes.clear();
    assignmentBytes.set(key, bytes);
  }
  return bytes;
}

/**
 * Encodes a RateLimitQuotaResponse (wire.ts writes it): each action's bucket_id as Envoy sent it
 * when known, its assignment from the cache above. A 10,000-bucket answer took a third of its
 * report's time through protobufjs' object encoder.
 */
export function encodeQuotaResponse(actions: readonly BucketAction[]): Buffer {
  return encodeResponse(
    actions.map((a) => ({
      id: a.idBytes ?? encodeBucketId(a.bucketId),
      assignment: a.kind === 'abandon' ? undefined : encodedAssignment(a.strategy, a.ttlSeconds),
    })),
  );
}
