import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import {
  type BucketAction,
  encodeQuotaResponse,
  QuotaResponseType,
  type Strategy,
  UsageReportsType,
} from '../../src/rlqs/protos.js';
import { decodeBucketId, decodeUsageReports } from '../../src/rlqs/wire.js';

/**
 * The hand-written RLQS codec (src/rlqs/wire.ts, plugged into grpc-js as the method's
 * requestDeserialize / responseSerialize) against protobufjs on Envoy's own protos, on random
 * messages: reports written field by field (the known fields in either order, unknown fields of
 * every wire type, groups too, anywhere, in every nested message) must decode as protobufjs
 * decodes the same bytes; answers the hand encoder writes must decode in protobufjs to the message
 * protobufjs itself would have written, byte for byte. `PROPERTY_RUNS` sets the runs (default 200).
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const BucketIdType = UsageReportsType.lookupType('envoy.service.rate_limit_quota.v3.BucketId');
const UsageType = UsageReportsType.lookupType(
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage',
);
const DurationType = UsageReportsType.lookupType('google.protobuf.Duration');

// Any Unicode text (not lone surrogates, which UTF-8 cannot carry); `__proto__` has a test of its own.
const text = fc.string({ unit: 'binary', maxLength: 10 }).filter((s) => s !== '__proto__');
const bucketMap = fc.dictionary(text, text, { maxKeys: 4 });

/** One encoded field: tag and payload, as protobufjs' Writer writes them. */
type Chunk = Uint8Array;

function field(write: (w: protobuf.Writer) => void): Chunk {
  const w = protobuf.Writer.create();
  write(w);
  return w.finish();
}

const delimited = (no: number, bytes: Uint8Array): Chunk =>
  field((w) => w.uint32((no << 3) | 2).bytes(bytes));

/** An unknown field of any wire type, on a field number none of the RLQS messages use. */
const unknownField: fc.Arbitrary<Chunk> = fc
  .tuple(
    fc.integer({ min: 16, max: 5000 }),
    fc.constantFrom(0, 1, 2, 3, 5),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    fc.uint8Array({ maxLength: 12 }),
  )
  .map(([no, type, n, bytes]) =>
    field((w) => {
      const lo = Number(n & 0xffffffffn);
      const hi = Number(n >> 32n);
      w.uint32((no << 3) | type);
      if (type === 0) w.uint64(new protobuf.util.LongBits(lo, hi).toNumber(true));
      else if (type === 1) w.fixed32(lo).fixed32(hi);
      else if (type === 2) w.bytes(bytes);
      else if (type === 5) w.fixed32(lo);
      else {
        // A group holding one varint field, closed by its end-group tag.
        w.uint32((1 << 3) | 0).uint32(lo);
        w.uint32((no << 3) | 4);
      }
    }),
  );

/** Known fields in their order or reversed, unknown ones inserted anywhere. */
const message = (known: Chunk[]): fc.Arbitrary<Uint8Array> =>
  fc
    .tuple(fc.boolean(), fc.array(fc.tuple(fc.nat(), unknownField), { maxLength: 3 }))
    .map(([reversed, unknown]) => {
      const chunks = reversed ? [...known].reverse() : [...known];
      for (const [at, chunk] of unknown) chunks.splice(at % (chunks.length + 1), 0, chunk);
      return Buffer.concat(chunks);
    });

const bucketIdBytes = (bucket: Record<string, string>): fc.Arbitrary<Uint8Array> =>
  fc
    .tuple(
      ...Object.entries(bucket).map(([k, v]) =>
        message([field((w) => w.uint32(0x0a).string(k)), field((w) => w.uint32(0x12).string(v))]),
      ),
    )
    .chain((entries) => message(entries.map((e) => delimited(1, e))));

const durationBytes = fc
  .tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: -999_999_999, max: 999_999_999 }))
  .chain(([seconds, nanos]) =>
    message([
      ...(seconds !== 0 ? [field((w) => w.uint32(0x08).int64(seconds))] : []),
      ...(nanos !== 0 ? [field((w) => w.uint32(0x10).int32(nanos))] : []),
    ]),
  );

const count = fc.option(fc.maxSafeNat(), { nil: undefined });

const usageBytes = fc
  .tuple(bucketMap, fc.option(durationBytes, { nil: undefined }), count, count)
  .chain(([bucket, duration, allowed, denied]) =>
    bucketIdBytes(bucket).chain((id) =>
      message([
        delimited(1, id),
        ...(duration ? [delimited(2, duration)] : []),
        ...(allowed !== undefined ? [field((w) => w.uint32(0x18).uint64(allowed))] : []),
        ...(denied !== undefined ? [field((w) => w.uint32(0x20).uint64(denied))] : []),
      ]),
    ),
  );

const reportBytes = fc
  .tuple(fc.option(text, { nil: undefined }), fc.array(usageBytes, { maxLength: 6 }))
  .chain(([domain, usages]) =>
    message([
      ...(domain !== undefined ? [field((w) => w.uint32(0x0a).string(domain))] : []),
      ...usages.map((u) => delimited(2, u)),
    ]),
  );

interface ProtobufUsage {
  bucket_id?: { bucket?: Record<string, string> };
  time_elapsed?: { seconds?: number; nanos?: number };
  num_requests_allowed?: number;
  num_requests_denied?: number;
}

/** What protobufjs decodes from `bytes`, in the hand decoder's shape. */
function protobufjsReading(bytes: Uint8Array) {
  const o = UsageReportsType.toObject(UsageReportsType.decode(bytes), { longs: Number }) as {
    domain?: string;
    bucket_quota_usages?: ProtobufUsage[];
  };
  return {
    domain: o.domain ?? '',
    usages: (o.bucket_quota_usages ?? []).map((u) => ({
      bucketId: { ...u.bucket_id?.bucket },
      timeElapsedMs: (u.time_elapsed?.seconds ?? 0) * 1000 + Math.trunc((u.time_elapsed?.nanos ?? 0) / 1e6),
      allowed: u.num_requests_allowed ?? 0,
      denied: u.num_requests_denied ?? 0,
    })),
  };
}

/** The bytes of each usage's bucket_id field as protobufjs finds them. */
function protobufjsBucketIdBytes(bytes: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag !== 0x12) {
      r.skipType(tag & 7);
      continue;
    }
    const usage = protobuf.Reader.create(r.bytes());
    let id: Buffer | undefined;
    while (usage.pos < usage.len) {
      const t = usage.uint32();
      if (t === 0x0a) id = Buffer.from(usage.bytes());
      else usage.skipType(t & 7);
    }
    out.push(id ?? Buffer.alloc(0));
  }
  return out;
}

describe('RLQS hand codec against protobufjs (property tests)', () => {
  it('a report decodes as protobufjs decodes the same bytes (field order, unknown fields, groups, signed durations)', () => {
    fc.assert(
      fc.property(reportBytes, (bytes) => {
        const mine = decodeUsageReports(Buffer.from(bytes));
        const theirs = protobufjsReading(bytes);
        expect({
          domain: mine.domain,
          usages: mine.usages.map((u) => ({
            bucketId: { ...u.bucketId },
            timeElapsedMs: u.timeElapsedMs,
            allowed: u.allowed,
            denied: u.denied,
          })),
        }).toEqual(theirs);
        // The wire id is the bucket_id field's bytes as sent (what the answer echoes).
        expect(mine.usages.map((u) => Buffer.from(u.wireId, 'latin1'))).toEqual(
          protobufjsBucketIdBytes(bytes),
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('protobufjs-encoded reports of random objects decode to those objects', () => {
    const usage = fc.record(
      {
        bucket: bucketMap,
        seconds: fc.integer({ min: 0, max: 1e6 }),
        nanos: fc.integer({ min: 0, max: 999_999_999 }),
        allowed: fc.maxSafeNat(),
        denied: fc.maxSafeNat(),
      },
      { requiredKeys: ['bucket'] },
    );
    fc.assert(
      fc.property(text, fc.array(usage, { maxLength: 8 }), (domain, usages) => {
        const bytes = UsageReportsType.encode({
          domain,
          bucket_quota_usages: usages.map((u) => ({
            bucket_id: { bucket: u.bucket },
            ...(u.seconds !== undefined || u.nanos !== undefined
              ? { time_elapsed: { seconds: u.seconds ?? 0, nanos: u.nanos ?? 0 } }
              : {}),
            num_requests_allowed: u.allowed,
            num_requests_denied: u.denied,
          })),
        }).finish();
        const decoded = decodeUsageReports(Buffer.from(bytes));
        expect(decoded.domain).toBe(domain);
        expect(decoded.usages.map((u) => [{ ...u.bucketId }, u.timeElapsedMs, u.allowed, u.denied])).toEqual(
          usages.map((u) => [
            u.bucket,
            (u.seconds ?? 0) * 1000 + Math.trunc((u.nanos ?? 0) / 1e6),
            u.allowed ?? 0,
            u.denied ?? 0,
          ]),
        );
      }),
      { numRuns: RUNS },
    );
  });

  const strategy: fc.Arbitrary<Strategy> = fc.oneof(
    fc.constant({ kind: 'allow_all' } as const),
    fc.constant({ kind: 'deny_all' } as const),
    fc.record({
      kind: fc.constant('token_bucket' as const),
      maxTokens: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      tokensPerFill: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      fillIntervalSeconds: fc.integer({ min: 0, max: 2 ** 40 }),
    }),
  );
  /** An action, and how its bucket_id is given: by the map, or as the bytes Envoy sent (buffer or latin1 string). */
  const action: fc.Arbitrary<BucketAction> = fc
    .tuple(
      bucketMap,
      fc.constantFrom('map', 'bytes', 'latin1'),
      fc.option(fc.tuple(strategy, fc.integer({ min: 0, max: 2 ** 40 })), { nil: undefined }),
    )
    .map(([bucket, idAs, assigned]) => {
      const encodedId = BucketIdType.encode({ bucket }).finish();
      const idBytes =
        idAs === 'map' ? undefined : idAs === 'bytes' ? encodedId : Buffer.from(encodedId).toString('latin1');
      const base = { bucketId: bucket, ...(idBytes !== undefined ? { idBytes } : {}) };
      return assigned === undefined
        ? { ...base, kind: 'abandon' as const }
        : { ...base, kind: 'assign' as const, strategy: assigned[0], ttlSeconds: assigned[1] };
    });

  /** The response object protobufjs is given for `actions` (the strategies as Envoy's proto spells them). */
  function protobufjsObject(actions: readonly BucketAction[]): object {
    return {
      bucket_action: actions.map((a) => ({
        bucket_id: { bucket: a.bucketId },
        ...(a.kind === 'abandon'
          ? { abandon_action: {} }
          : {
              quota_assignment_action: {
                assignment_time_to_live: { seconds: a.ttlSeconds },
                rate_limit_strategy:
                  a.strategy.kind === 'token_bucket'
                    ? {
                        token_bucket: {
                          max_tokens: a.strategy.maxTokens,
                          tokens_per_fill: { value: a.strategy.tokensPerFill },
                          fill_interval: { seconds: a.strategy.fillIntervalSeconds },
                        },
                      }
                    : { blanket_rule: a.strategy.kind === 'allow_all' ? 'ALLOW_ALL' : 'DENY_ALL' },
              },
            }),
      })),
    };
  }

  it('an answer is, byte for byte, what protobufjs writes for the same message, and decodes back to it', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 8 }), (actions) => {
        const mine = encodeQuotaResponse(actions);
        const theirs = QuotaResponseType.encode(
          QuotaResponseType.fromObject(protobufjsObject(actions)),
        ).finish();
        expect(Buffer.from(mine).equals(Buffer.from(theirs))).toBe(true);
        const options = { longs: Number, enums: String, oneofs: true };
        expect(QuotaResponseType.toObject(QuotaResponseType.decode(mine), options)).toEqual(
          QuotaResponseType.toObject(QuotaResponseType.decode(theirs), options),
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('a bucket key named __proto__ is an own key of the map, not a prototype', () => {
    const bytes = BucketIdType.encode({ bucket: { a: '1' } }).finish();
    // protobufjs' object writer drops a __proto__ key, so its entry is written by hand.
    const entry = field((w) => w.uint32(0x0a).string('__proto__').uint32(0x12).string('x'));
    const id = decodeBucketId(Buffer.concat([bytes, delimited(1, entry)]));
    expect(Object.keys(id).sort()).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(id)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(id, '__proto__')?.value).toBe('x');
  });

  it('Duration decodes the same through the hand decoder and protobufjs for negative values', () => {
    const d = DurationType.encode({ seconds: -3, nanos: -500_000_000 }).finish();
    const bytes = UsageReportsType.encode({ domain: 'd' }).finish();
    const usage = Buffer.concat([
      delimited(1, BucketIdType.encode({ bucket: { a: 'b' } }).finish()),
      delimited(2, d),
    ]);
    const report = Buffer.concat([bytes, delimited(2, usage)]);
    expect(decodeUsageReports(report).usages[0]!.timeElapsedMs).toBe(-3500);
    expect(UsageType.decode(usage)).toBeTruthy();
  });
});

describe('hostile bytes', () => {
  it('a message of nothing but nested group starts fails as malformed, without overflowing the stack', () => {
    // 0x4b: an unknown field 9 of wire type 3 (start group), a million times, never closed.
    const bytes = Buffer.alloc(1_000_000, 0x4b);
    expect(() => decodeUsageReports(bytes)).toThrow(/^rlqs: /);
  });
});
