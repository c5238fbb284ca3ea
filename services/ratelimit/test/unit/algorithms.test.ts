import { describe, expect, it } from 'vitest';
import { slidingWindowOutcome, slidingWindowStep } from '../../src/limiter/algorithms/sliding-window.js';
import { tokenBucketOutcome, tokenBucketStep } from '../../src/limiter/algorithms/token-bucket.js';
import { Code } from '../../src/proto/messages.js';
import { desc, harness, ok, req } from '../helpers.js';

const YAML = `
domain: d
descriptors:
  - key: sw
    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: sliding_window }
  - key: tb
    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: token_bucket, burst: 5 }
  - key: tbdefault
    rate_limit: { unit: second, requests_per_unit: 4, algorithm: token_bucket }
  - key: five
    rate_limit: { unit: minute, unit_multiplier: 5, requests_per_unit: 3 }
  - key: sw30
    rate_limit: { unit: second, unit_multiplier: 30, requests_per_unit: 2, algorithm: sliding_window }
  - key: fixed
    rate_limit: { unit: minute, requests_per_unit: 2 }
`;

/** A minute-aligned start (ms): 1_000_020 s is a multiple of 60. */
const T0 = 1_000_020_000;
const S = (k: string, stat: string) => `ratelimit.service.rate_limit.d.${k}.${stat}`;

describe('sliding_window (10 per minute, 10 sub-windows of 6 s)', () => {
  it('admits 10, refuses the 11th with nothing taken; remaining, reset and retry from the sub-windows', async () => {
    const h = harness(YAML);
    h.clock.ms = T0 + 1_000; // sub-window 0 of the minute, 1 s in
    for (let i = 0; i < 10; i++) {
      const r = await ok(h, req('d', [desc({ sw: 'a' })]));
      expect(r.overallCode).toBe(Code.OK);
      expect(r.statuses[0]!.limitRemaining).toBe(9 - i);
      expect(r.statuses[0]!.currentLimit).toEqual({ requestsPerUnit: 10, unit: 2 });
    }
    const refused = await ok(h, req('d', [desc({ sw: 'a' })]));
    expect(refused.overallCode).toBe(Code.OVER_LIMIT);
    expect(refused.statuses[0]!.limitRemaining).toBe(0);
    // The hits sit in the sub-window [0, 6 s): it leaves the counted range when 66 s begins.
    expect(refused.statuses[0]!.durationUntilResetSeconds).toBe(65);
    expect(refused.statuses[0]!.retryAfterMs).toBe(65_000);
    expect(h.counter(S('sw', 'over_limit'))).toBe(1);
    expect(h.counter(S('sw', 'within_limit'))).toBe(10);
    // Still refused just before the sub-window leaves, admitted once it has.
    h.clock.ms = T0 + 65_999;
    expect((await ok(h, req('d', [desc({ sw: 'a' })]))).overallCode).toBe(Code.OVER_LIMIT);
    h.clock.ms = T0 + 66_000;
    const again = await ok(h, req('d', [desc({ sw: 'a' })]));
    expect(again.overallCode).toBe(Code.OK);
    expect(again.statuses[0]!.limitRemaining).toBe(9);
  });

  it('across a fixed-window boundary it does not admit twice the limit (the fixed window does)', async () => {
    const h = harness(YAML);
    h.clock.ms = T0 + 59_000;
    for (let i = 0; i < 10; i++) await ok(h, req('d', [desc({ sw: 'b' })]));
    h.clock.ms = T0 + 61_000; // a new minute: the fixed window would start from 0 here
    expect((await ok(h, req('d', [desc({ sw: 'b' })]))).overallCode).toBe(Code.OVER_LIMIT);
    const fixed = harness(YAML);
    fixed.clock.ms = T0 + 59_000;
    for (let i = 0; i < 2; i++) await ok(fixed, req('d', [desc({ fixed: 'b' })]));
    fixed.clock.ms = T0 + 61_000;
    expect((await ok(fixed, req('d', [desc({ fixed: 'b' })]))).overallCode).toBe(Code.OK);
  });

  it('hits_addend above what is left is refused and takes nothing; a smaller one fits', async () => {
    const h = harness(YAML);
    h.clock.ms = T0;
    expect((await ok(h, req('d', [desc({ sw: 'c' }, { hitsAddend: 7 })]))).statuses[0]!.limitRemaining).toBe(
      3,
    );
    const big = await ok(h, req('d', [desc({ sw: 'c' }, { hitsAddend: 4 })]));
    expect(big.overallCode).toBe(Code.OVER_LIMIT);
    const fits = await ok(h, req('d', [desc({ sw: 'c' }, { hitsAddend: 3 })]));
    expect(fits.overallCode).toBe(Code.OK);
    expect(fits.statuses[0]!.limitRemaining).toBe(0);
  });

  it('retry-after waits for as many sub-windows as the hits need', () => {
    const spec = { limit: 10, windowMs: 60_000, subWindows: 10 };
    let state: Map<number, number> | undefined;
    const base = 1_000_020_000; // sub-window index 166670
    for (const [at, hits] of [
      [0, 4],
      [6_000, 3],
      [12_000, 3],
    ] as const) {
      const step = slidingWindowStep(state, base + at, hits, spec);
      expect(step.admitted).toBe(true);
      state = step.next;
    }
    const now = base + 13_000;
    const refused = slidingWindowStep(state, now, 5, spec);
    expect(refused.admitted).toBe(false);
    expect(refused.next).toEqual(state);
    const outcome = slidingWindowOutcome(refused.counts, false, now, 5, spec);
    expect(outcome.after).toBe(15);
    // 4 leave at 66 s (not enough), 3 more at 72 s: 3 + 5 <= 10.
    expect(outcome.retryAfterMs).toBe(72_000 - 13_000);
    expect(outcome.resetMs).toBe(66_000 - 13_000);
    // A sub-window from a clock running ahead counts as the current one (errs toward refusing).
    const ahead = slidingWindowStep(new Map([[166_670 + 3, 10]]), base, 1, spec);
    expect(ahead.admitted).toBe(false);
  });
});

describe('token_bucket (10 per minute, burst 5)', () => {
  it('a burst of 5 at once, then one token back every 6 s; refused calls take nothing', async () => {
    const h = harness(YAML);
    h.clock.ms = T0;
    for (let i = 0; i < 5; i++) {
      const r = await ok(h, req('d', [desc({ tb: 'a' })]));
      expect(r.overallCode).toBe(Code.OK);
      expect(r.statuses[0]!.limitRemaining).toBe(4 - i);
    }
    const refused = await ok(h, req('d', [desc({ tb: 'a' })]));
    expect(refused.overallCode).toBe(Code.OVER_LIMIT);
    // One token is back 6 s after the bucket ran dry.
    expect(refused.statuses[0]!.durationUntilResetSeconds).toBe(6);
    expect(refused.statuses[0]!.retryAfterMs).toBe(6_000);
    h.clock.ms = T0 + 3_000;
    const half = await ok(h, req('d', [desc({ tb: 'a' })]));
    expect(half.overallCode).toBe(Code.OVER_LIMIT);
    expect(half.statuses[0]!.durationUntilResetSeconds).toBe(3);
    h.clock.ms = T0 + 6_000;
    const back = await ok(h, req('d', [desc({ tb: 'a' })]));
    expect(back.overallCode).toBe(Code.OK);
    expect(back.statuses[0]!.limitRemaining).toBe(0);
    // Refused calls took nothing: the token came back on time.
  });

  it('hits_addend above the tokens left is refused whole; the bucket never holds more than burst', async () => {
    const h = harness(YAML);
    h.clock.ms = T0;
    expect((await ok(h, req('d', [desc({ tb: 'b' }, { hitsAddend: 3 })]))).statuses[0]!.limitRemaining).toBe(
      2,
    );
    const big = await ok(h, req('d', [desc({ tb: 'b' }, { hitsAddend: 3 })]));
    expect(big.overallCode).toBe(Code.OVER_LIMIT);
    // 3 are needed, 2 are there: 6 s for the third.
    expect(big.statuses[0]!.retryAfterMs).toBe(6_000);
    h.clock.ms = T0 + 3_600_000;
    expect((await ok(h, req('d', [desc({ tb: 'b' }, { hitsAddend: 0 })]))).statuses[0]!.limitRemaining).toBe(
      5,
    );
  });

  it('burst defaults to requests_per_unit; remaining is the whole tokens left', async () => {
    const h = harness(YAML);
    h.clock.ms = T0;
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await ok(h, req('d', [desc({ tbdefault: 'x' })]))).overallCode);
    expect(codes).toEqual([Code.OK, Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT]);
    h.clock.ms = T0 + 250; // 4 per second: one token per 250 ms
    expect((await ok(h, req('d', [desc({ tbdefault: 'x' })]))).overallCode).toBe(Code.OK);
    const r = await ok(h, req('d', [desc({ tbdefault: 'x' })]));
    expect(r.statuses[0]!.durationUntilResetSeconds).toBe(0);
    expect(r.statuses[0]!.durationUntilResetNanos).toBe(250_000_000);
  });

  it('the step is integer arithmetic on scaled tokens', () => {
    const spec = { rate: 3, burst: 2, windowMs: 1000 };
    const a = tokenBucketStep(undefined, 0, 2, spec);
    expect(a).toMatchObject({ admitted: true, tokens: 0 });
    const b = tokenBucketStep(a.next, 333, 1, spec); // 333 ms x 3 = 999 units: not yet a token
    expect(b.admitted).toBe(false);
    expect(tokenBucketOutcome(b.tokens, false, 1, spec).retryAfterMs).toBe(1);
    const c = tokenBucketStep(b.next, 334, 1, spec);
    expect(c.admitted).toBe(true);
  });
});

describe('unit_multiplier', () => {
  it('a fixed window of 5 minutes: epoch-aligned to 300 s, key and reset follow it', async () => {
    const start = 1_000_200; // a multiple of 300
    const h = harness(YAML, { now: start + 100 });
    for (let i = 0; i < 3; i++) {
      const r = await ok(h, req('d', [desc({ five: 'a' })]));
      expect(r.overallCode).toBe(Code.OK);
      expect(r.statuses[0]!.durationUntilResetSeconds).toBe(200);
    }
    expect((await ok(h, req('d', [desc({ five: 'a' })]))).overallCode).toBe(Code.OVER_LIMIT);
    const [count] = await h.backend.read([
      { key: `d_five_a_${start}`, hits: 0, ttlSeconds: 300, perSecond: false },
    ]);
    expect(count).toBe(4);
    h.clock.now = start + 300;
    expect((await ok(h, req('d', [desc({ five: 'a' })]))).overallCode).toBe(Code.OK);
  });

  it('a sliding window of 30 s (10 sub-windows of 3 s)', async () => {
    const h = harness(YAML);
    h.clock.ms = T0 + 29_000;
    await ok(h, req('d', [desc({ sw30: 'a' })]));
    await ok(h, req('d', [desc({ sw30: 'a' })]));
    h.clock.ms = T0 + 58_999;
    expect((await ok(h, req('d', [desc({ sw30: 'a' })]))).overallCode).toBe(Code.OVER_LIMIT);
    h.clock.ms = T0 + 60_000; // sub-window [27 s, 30 s) has left
    expect((await ok(h, req('d', [desc({ sw30: 'a' })]))).overallCode).toBe(Code.OK);
  });
});

describe('LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED', () => {
  it('one comma-separated value per descriptor with a limit, in request order; retry-after when refused', async () => {
    const h = harness(YAML, { allDescriptorsHeaders: true, now: 1_000_020 + 40 });
    const descriptors = [desc({ fixed: 'h' }), desc({ nothing: 'x' }), desc({ tb: 'h' })];
    const first = await ok(h, req('d', descriptors));
    expect(first.responseHeadersToAdd).toEqual([
      { key: 'x-ratelimit-limit', value: '2, 10' },
      { key: 'x-ratelimit-remaining', value: '1, 4' },
      { key: 'x-ratelimit-reset', value: '20, 6' },
    ]);
    await ok(h, req('d', descriptors));
    const refused = await ok(h, req('d', descriptors));
    expect(refused.overallCode).toBe(Code.OVER_LIMIT);
    expect(refused.responseHeadersToAdd).toEqual([
      { key: 'x-ratelimit-limit', value: '2, 10' },
      { key: 'x-ratelimit-remaining', value: '0, 2' },
      { key: 'x-ratelimit-reset', value: '20, 6' },
      // The fixed window refuses until its minute ends, 20 s from now.
      { key: 'retry-after', value: '20' },
    ]);
  });

  it('retry-after is whole seconds rounded up, of the longest-waiting refusing descriptor', async () => {
    const h = harness(YAML, { allDescriptorsHeaders: true });
    h.clock.ms = T0 + 500;
    for (let i = 0; i < 4; i++) await ok(h, req('d', [desc({ tbdefault: 'r' })]));
    const refused = await ok(h, req('d', [desc({ tbdefault: 'r' })]));
    expect(refused.statuses[0]!.retryAfterMs).toBe(250);
    expect(refused.responseHeadersToAdd.find((x) => x.key === 'retry-after')?.value).toBe('1');
  });

  it('off by default; LIMIT_RESPONSE_HEADERS_ENABLED alone keeps the reference three', async () => {
    const off = harness(YAML, { now: 1_000_020 + 40 });
    expect((await ok(off, req('d', [desc({ fixed: 'h' })]))).responseHeadersToAdd).toEqual([]);
    const reference = harness(YAML, { headers: true, now: 1_000_020 + 40 });
    expect(
      (await ok(reference, req('d', [desc({ fixed: 'h' }), desc({ tb: 'h' })]))).responseHeadersToAdd,
    ).toEqual([
      { key: 'RateLimit-Limit', value: '2' },
      { key: 'RateLimit-Remaining', value: '1' },
      { key: 'RateLimit-Reset', value: '20' },
    ]);
  });
});
