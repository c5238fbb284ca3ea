import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RLQS_PROTO_DIR } from '@platform/ratelimit-proto/dir';
import { describe, expect, it } from 'vitest';
import { encodeQuotaResponse, QuotaResponseType, UsageReportsType } from '../../src/rlqs/protos.js';
import { decodeBucketId, decodeUsageReports, encodeBucketId } from '../../src/rlqs/wire.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe("Envoy's RLQS protos", () => {
  it('are the unchanged upstream copies SOURCES.md lists (digest of every file, no file more or less)', () => {
    const listed = new Map(
      [
        ...readFileSync(join(RLQS_PROTO_DIR, 'SOURCES.md'), 'utf8').matchAll(
          /^([0-9a-f]{64}) {2}(\S+\.proto)$/gm,
        ),
      ].map((m) => [m[2]!, m[1]!]),
    );
    const actual = new Map(
      files(RLQS_PROTO_DIR)
        .filter((f) => f.endsWith('.proto'))
        .map((f) => [
          relative(RLQS_PROTO_DIR, f),
          createHash('sha256').update(readFileSync(f)).digest('hex'),
        ]),
    );
    expect(listed.size).toBeGreaterThan(0);
    expect(actual).toEqual(listed);
  });

  it('ALLOW_ALL (the enum zero) is written as the chosen strategy; TTL and fill interval in whole seconds', () => {
    const bytes = encodeQuotaResponse([
      { bucketId: { a: 'b' }, kind: 'assign', strategy: { kind: 'allow_all' }, ttlSeconds: 15 },
      {
        bucketId: { a: 'c' },
        kind: 'assign',
        strategy: { kind: 'token_bucket', maxTokens: 3, tokensPerFill: 2, fillIntervalSeconds: 60 },
        ttlSeconds: 15,
      },
      { bucketId: { a: 'd' }, kind: 'abandon' },
    ]);
    const decoded = QuotaResponseType.toObject(QuotaResponseType.decode(bytes), {
      oneofs: true,
      longs: Number,
      enums: String,
    });
    expect(decoded.bucket_action[0].quota_assignment_action.rate_limit_strategy).toEqual({
      blanket_rule: 'ALLOW_ALL',
      strategy: 'blanket_rule',
    });
    expect(decoded.bucket_action[1].quota_assignment_action).toEqual({
      assignment_time_to_live: { seconds: 15 },
      rate_limit_strategy: {
        token_bucket: { max_tokens: 3, tokens_per_fill: { value: 2 }, fill_interval: { seconds: 60 } },
        strategy: 'token_bucket',
      },
    });
    expect(decoded.bucket_action[2].bucket_action).toBe('abandon_action');
  });

  it('a report without time_elapsed, or with 0s, decodes (Envoy sends 0s first)', () => {
    const bytes = UsageReportsType.encode({
      domain: 'd',
      bucket_quota_usages: [
        { bucket_id: { bucket: { a: '1' } }, time_elapsed: { seconds: 0 }, num_requests_allowed: 1 },
        { bucket_id: { bucket: { a: '2' } }, num_requests_denied: 3 },
        {
          bucket_id: { bucket: { a: '3' } },
          time_elapsed: { seconds: 5, nanos: 250_000_000 },
          num_requests_allowed: 9,
        },
      ],
    }).finish();
    const decoded = decodeUsageReports(Buffer.from(bytes));
    expect(decoded.domain).toBe('d');
    expect(
      decoded.usages.map((u) => ({
        bucketId: u.bucketId,
        timeElapsedMs: u.timeElapsedMs,
        allowed: u.allowed,
        denied: u.denied,
      })),
    ).toEqual([
      { bucketId: { a: '1' }, timeElapsedMs: 0, allowed: 1, denied: 0 },
      { bucketId: { a: '2' }, timeElapsedMs: 0, allowed: 0, denied: 3 },
      { bucketId: { a: '3' }, timeElapsedMs: 5250, allowed: 9, denied: 0 },
    ]);
  });

  it('the hand decoder reads what protobufjs writes: several pairs, unknown fields skipped, large counts; malformed bytes throw', () => {
    const bucket = { name: 'api', env: 'prod', ключ: 'значение' };
    const bytes = UsageReportsType.encode({
      domain: 'edge',
      bucket_quota_usages: [{ bucket_id: { bucket }, num_requests_allowed: 2 ** 40, num_requests_denied: 7 }],
    }).finish();
    // An unknown field (number 15, varint) before and inside the usage.
    const withUnknown = Buffer.concat([Buffer.from([0x78, 0x05]), Buffer.from(bytes)]);
    const decoded = decodeUsageReports(withUnknown);
    expect(decoded.domain).toBe('edge');
    const u = decoded.usages[0]!;
    expect(u.bucketId).toEqual(bucket);
    expect(u.allowed).toBe(2 ** 40);
    expect(u.denied).toBe(7);
    // The wire id is the bucket_id bytes: re-encoding the map gives a BucketId that decodes the same.
    expect(decodeBucketId(encodeBucketId(bucket))).toEqual(bucket);
    expect(decodeBucketId(Buffer.from(u.wireId, 'latin1'))).toEqual(bucket);
    expect(() => decodeUsageReports(Buffer.from(bytes).subarray(0, bytes.length - 3))).toThrow();
  });

  it('an answer echoes the bucket_id bytes it was given', () => {
    const id = encodeBucketId({ b: '2', a: '1' });
    const bytes = encodeQuotaResponse([
      { bucketId: {}, idBytes: id, kind: 'assign', strategy: { kind: 'deny_all' }, ttlSeconds: 15 },
    ]);
    const decoded = QuotaResponseType.toObject(QuotaResponseType.decode(bytes), { enums: String });
    expect(decoded.bucket_action[0].bucket_id.bucket).toEqual({ a: '1', b: '2' });
    expect(decoded.bucket_action[0].quota_assignment_action.rate_limit_strategy.blanket_rule).toBe(
      'DENY_ALL',
    );
  });
});
