/**
 * Hostile input on both listeners of a real app (in-process, the in-process store, rules of every
 * algorithm): random and mutated `POST /json` bodies, and random, truncated and hand-built protobuf
 * for gRPC ShouldRateLimit. Every answer is a decision or the documented refusal (HTTP 400
 * `Bad Request: <reason>`; gRPC UNKNOWN for a call error as the reference, INTERNAL for bytes that
 * do not decode), nothing is logged at error (an unexpected exception is), and the app answers a
 * valid call afterwards. `FUZZ_RUNS` for a longer run, `FUZZ_SEED` to repeat one.
 */
import * as grpc from '@grpc/grpc-js';
import { fuzzSettings } from '@platform/testkit/fuzz/settings';
import fc from 'fast-check';
import { pino } from 'pino';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningApp, startApp } from './app-harness.js';

const RULES = `
domain: example
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: s
    rate_limit: { unit: minute, requests_per_unit: 100, algorithm: sliding_window }
  - key: t
    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: token_bucket, burst: 20 }
  - key: free
    rate_limit: { unlimited: true }
`;

const settings = fuzzSettings(400);
const errorLines: string[] = [];
let s: RunningApp;
let client: grpc.Client;

beforeAll(async () => {
  const logger = pino({ level: 'error' }, { write: (line: string) => void errorLines.push(line) });
  s = await startApp({ 'rules.yaml': RULES }, {}, { logger });
  client = new grpc.Client(s.grpc, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await s?.close();
});

const unit = fc.oneof(
  fc.constantFrom('SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR', 'UNKNOWN'),
  fc.integer({ min: -2, max: 12 }),
  fc.string(),
);
const count = fc.oneof(
  fc.nat(),
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String),
  fc.constant('18446744073709551615'),
);
const descriptor = fc.record(
  {
    entries: fc.array(
      fc.record(
        {
          key: fc.oneof(fc.constantFrom('k', 's', 't', 'free', ''), fc.string()),
          value: fc.oneof(fc.string(), fc.integer()),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 4 },
    ),
    hits_addend: count,
    limit: fc.record({ requests_per_unit: count, unit }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc
    .record(
      {
        domain: fc.oneof(fc.constant('example'), fc.string(), fc.integer()),
        descriptors: fc.array(descriptor, { maxLength: 5 }),
        hitsAddend: count,
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

it(
  'POST /json: every body gets a decision or `400 Bad Request: <reason>`, nothing logged at error',
  async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const r = await fetch(`${s.http}/json`, { method: 'POST', body: payload });
        const text = await r.text();
        if (r.status === 400) expect(text).toMatch(/^Bad Request: .+\n$/);
        else {
          expect([200, 429]).toContain(r.status);
          expect(JSON.parse(text)).toHaveProperty('overallCode');
        }
      }),
      { numRuns: settings.numRuns, seed: settings.seed },
    );
    expect(errorLines).toEqual([]);
    const ok = await fetch(`${s.http}/json`, {
      method: 'POST',
      body: JSON.stringify({ domain: 'example', descriptors: [{ entries: [{ key: 'free', value: 'x' }] }] }),
    });
    expect(ok.status).toBe(200);
  },
  settings.timeoutMs,
);

// Protobuf field by field (protobufjs' Writer, as rlqs-wire.property.test.ts): RateLimitRequest's
// domain 1, descriptors 2 with entries 1 {key 1, value 2}, limit 2 {requests_per_unit 1, unit 2},
// hits_addend 3 {value 1}; hits_addend 3, so field values reach the decoder's edges (uint64 near
// 2^64, unknown units).
const field = (n: number, payload: Uint8Array): Buffer =>
  Buffer.from(
    protobuf.Writer.create()
      .uint32((n << 3) | 2)
      .bytes(payload)
      .finish(),
  );
const number = (n: number, value: bigint): Buffer => {
  const bits = new protobuf.util.LongBits(Number(value & 0xffffffffn), Number(value >> 32n));
  return Buffer.from(
    protobuf.Writer.create()
      .uint32(n << 3)
      .uint64(bits.toLong(true))
      .finish(),
  );
};
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const entry = fc
  .tuple(fc.string(), fc.string())
  .map(([k, v]) => field(1, Buffer.concat([field(1, Buffer.from(k)), field(2, Buffer.from(v))])));
const wireDescriptor = fc
  .tuple(
    fc.array(entry, { maxLength: 4 }),
    fc.option(u64, { nil: undefined }),
    fc.option(fc.tuple(u64, fc.nat(12)), { nil: undefined }),
  )
  .map(([entries, hits, limit]) =>
    field(
      2,
      Buffer.concat([
        ...entries,
        ...(limit ? [field(2, Buffer.concat([number(1, limit[0]), number(2, BigInt(limit[1]))]))] : []),
        ...(hits === undefined ? [] : [field(3, number(1, hits))]),
      ]),
    ),
  );
const message = fc
  .tuple(
    fc.oneof(fc.constant('example'), fc.string()),
    fc.array(wireDescriptor, { maxLength: 6 }),
    fc.option(u64, { nil: undefined }),
  )
  .map(([domain, descriptors, hits]) =>
    Buffer.concat([
      field(1, Buffer.from(domain)),
      ...descriptors,
      ...(hits === undefined ? [] : [number(3, hits)]),
    ]),
  );
const bytes = fc.oneof(
  message,
  fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  message.chain((m) => fc.nat(Math.max(0, m.length - 1)).map((cut) => m.subarray(0, cut))),
);

function shouldRateLimit(request: Buffer): Promise<{ code: number; bytes: number }> {
  const id = (b: Buffer): Buffer => b;
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
      id,
      id,
      request,
      { deadline: Date.now() + 10_000 },
      (error, response) =>
        resolve(
          error
            ? { code: error.code ?? -1, bytes: 0 }
            : { code: grpc.status.OK, bytes: response?.length ?? 0 },
        ),
    ),
  );
}

it(
  'gRPC ShouldRateLimit: random, truncated and edge protobuf answers OK, UNKNOWN or INTERNAL; nothing logged at error',
  async () => {
    await fc.assert(
      fc.asyncProperty(bytes, async (request) => {
        const r = await shouldRateLimit(request);
        expect([grpc.status.OK, grpc.status.UNKNOWN, grpc.status.INTERNAL]).toContain(r.code);
      }),
      { numRuns: settings.numRuns, seed: settings.seed },
    );
    expect(errorLines).toEqual([]);
    const valid = field(1, Buffer.from('example'));
    const after = await shouldRateLimit(
      Buffer.concat([
        valid,
        field(2, field(1, Buffer.concat([field(1, Buffer.from('free')), field(2, Buffer.from('x'))]))),
      ]),
    );
    expect(after.code).toBe(grpc.status.OK);
  },
  settings.timeoutMs,
);
