import { createRequire } from 'node:module';
import { join } from 'node:path';
import { RLQS_PROTO, RLQS_PROTO_DIR } from '@platform/ratelimit-proto/dir';
import protobuf from 'protobufjs';
import { type LongLike, uint64ToNumber as uint64 } from '../proto/messages.js';

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
      readonly kind: 'assign';
      readonly strategy: Strategy;
      readonly ttlSeconds: number;
    }
  | { readonly bucketId: BucketId; readonly kind: 'abandon' };

interface WireUsage {
  bucket_id?: { bucket?: Record<string, string> } | null;
  time_elapsed?: { seconds?: number | LongLike; nanos?: number } | null;
  num_requests_allowed?: number | LongLike;
  num_requests_denied?: number | LongLike;
}

/** Decodes a binary RateLimitQuotaUsageReports; throws on malformed protobuf. */
export function decodeUsageReports(bytes: Uint8Array): UsageReports {
  const wire = UsageReportsType.decode(bytes) as unknown as {
    domain?: string;
    bucket_quota_usages?: WireUsage[];
  };
  const usages = (wire.bucket_quota_usages ?? []).map((u) => ({
    bucketId: u.bucket_id?.bucket ?? {},
    timeElapsedMs: u.time_elapsed
      ? uint64(u.time_elapsed.seconds) * 1000 + Math.floor((u.time_elapsed.nanos ?? 0) / 1e6)
      : 0,
    allowed: uint64(u.num_requests_allowed),
    denied: uint64(u.num_requests_denied),
  }));
  return { domain: wire.domain ?? '', usages };
}

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

function encodedAssignment(strategy: Strategy, ttlSeconds: number): Uint8Array {
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
 * Encodes a RateLimitQuotaResponse, writing the fields by hand around the cached assignments
 * (field numbers of rlqs.proto: response.bucket_action 1; BucketAction.bucket_id 1,
 * quota_assignment_action 2, abandon_action 3; BucketId.bucket 1, a map entry of key 1, value 2).
 * A 10,000-bucket answer took a third of its report's time through protobufjs' object encoder.
 */
export function encodeQuotaResponse(actions: readonly BucketAction[]): Uint8Array {
  const w = protobuf.Writer.create();
  for (const a of actions) {
    w.uint32(0x0a).fork(); // bucket_action
    w.uint32(0x0a).fork(); // bucket_id
    for (const key of Object.keys(a.bucketId)) {
      w.uint32(0x0a).fork().uint32(0x0a).string(key).uint32(0x12).string(a.bucketId[key]!).ldelim();
    }
    w.ldelim();
    if (a.kind === 'abandon') w.uint32(0x1a).uint32(0);
    else w.uint32(0x12).bytes(encodedAssignment(a.strategy, a.ttlSeconds));
    w.ldelim();
  }
  return w.finish();
}
