import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CounterBackend } from '../../src/backends/types.js';
import { Code } from '../../src/proto/messages.js';
import { desc, harness, ok, req } from '../helpers.js';

const NOW = 1_000_040; // 40 s into a minute window (1_000_020 is a multiple of 60)
const S = (k: string, stat: string) => `ratelimit.service.rate_limit.${k}.${stat}`;

/** A shared store that cannot be reached. */
const broken: CounterBackend = {
  description: 'broken',
  increment: () => Promise.reject(new Error('connection refused 10.0.0.1')),
  read: () => Promise.reject(new Error('down')),
  algorithms: new Set(['fixed_window', 'sliding_window', 'token_bucket']),
  admit: () => Promise.reject(new Error('connection refused 10.0.0.1')),
  healthy: () => false,
  onHealthChange: () => {},
  ready: () => Promise.resolve(false),
  close: () => Promise.resolve(),
};

const YAML = `
domain: d
descriptors:
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: ten
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: zero
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: free
    rate_limit: { unlimited: true }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: old
    rate_limit: { unit: minute, requests_per_unit: 1, name: old_rule }
  - key: new
    rate_limit: { unit: minute, requests_per_unit: 5, replaces: [{ name: old_rule }] }
  - key: freeold
    rate_limit: { unlimited: true, replaces: [{ name: old_rule }] }
  - key: det
    detailed_metric: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
`;

describe('decisions (reference "Limits, keys and counting")', () => {
  it('3 per minute: OK, OK, OK, OVER_LIMIT, OVER_LIMIT with remaining, reset and stats', async () => {
    const h = harness(YAML, { now: NOW });
    const codes: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await ok(h, req('d', [desc({ user: 'alice' })]));
      codes.push(r.overallCode);
      remaining.push(r.statuses[0]!.limitRemaining);
      expect(r.statuses[0]!.currentLimit).toEqual({ requestsPerUnit: 3, unit: 2 });
      expect(r.statuses[0]!.durationUntilResetSeconds).toBe(40);
    }
    expect(codes).toEqual([Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT, Code.OVER_LIMIT]);
    expect(remaining).toEqual([2, 1, 0, 0, 0]);
    // near = floor(3 * 0.8) = 2: the 3rd hit is near the limit.
    expect(h.counter(S('d.user', 'total_hits'))).toBe(5);
    expect(h.counter(S('d.user', 'within_limit'))).toBe(3);
    expect(h.counter(S('d.user', 'near_limit'))).toBe(1);
    expect(h.counter(S('d.user', 'over_limit'))).toBe(2);
    // A separate counter per value; the next window starts fresh.
    expect((await ok(h, req('d', [desc({ user: 'bob' })]))).overallCode).toBe(Code.OK);
    h.clock.now += 40;
    expect((await ok(h, req('d', [desc({ user: 'alice' })]))).statuses[0]!.limitRemaining).toBe(2);
  });

  it('cache key layout: prefix + domain_ + key_value_ per entry + window start', async () => {
    const h = harness(YAML, { now: NOW, cacheKeyPrefix: 'pfx:' });
    await ok(h, req('d', [desc({ user: 'alice' })]));
    const windowStart = Math.floor(NOW / 60) * 60;
    const [count] = await h.backend.read([
      { key: `pfx:d_user_alice_${windowStart}`, hits: 0, ttlSeconds: 60, perSecond: false },
    ]);
    expect(count).toBe(1);
  });

  it('hits_addend: request-level max(1, n), per-descriptor override, 0 checks without counting', async () => {
    const h = harness(YAML, { now: NOW });
    let r = await ok(h, req('d', [desc({ ten: 'a' })], 4));
    expect(r.statuses[0]!.limitRemaining).toBe(6);
    r = await ok(h, req('d', [desc({ ten: 'a' }, { hitsAddend: 0 })], 4));
    expect(r.statuses[0]!.limitRemaining).toBe(6);
    r = await ok(h, req('d', [desc({ ten: 'a' }, { hitsAddend: 3 })], 4));
    expect(r.statuses[0]!.limitRemaining).toBe(3);
    expect(h.counter(S('d.ten', 'total_hits'))).toBe(7);
  });

  it('near and over limit statistics split a multi-hit increment (near = floor(fround(10)*fround(0.8)) = 8)', async () => {
    const h = harness(YAML, { now: NOW });
    await ok(h, req('d', [desc({ ten: 'a' })], 7)); // 0 -> 7: within 7, no near
    expect(h.counter(S('d.ten', 'near_limit'))).toBe(0);
    await ok(h, req('d', [desc({ ten: 'a' })], 2)); // 7 -> 9: near += 9 - 8 = 1
    expect(h.counter(S('d.ten', 'near_limit'))).toBe(1);
    const r = await ok(h, req('d', [desc({ ten: 'a' })], 3)); // 9 -> 12: over += 2, near += 10 - max(8, 9) = 1
    expect(r.overallCode).toBe(Code.OVER_LIMIT);
    expect(h.counter(S('d.ten', 'over_limit'))).toBe(2);
    expect(h.counter(S('d.ten', 'near_limit'))).toBe(2);
    await ok(h, req('d', [desc({ ten: 'a' })], 2)); // before 12 >= 10: over += 2
    expect(h.counter(S('d.ten', 'over_limit'))).toBe(4);
    expect(h.counter(S('d.ten', 'within_limit'))).toBe(9);
  });

  it('NEAR_LIMIT_RATIO changes the near threshold', async () => {
    const h = harness(YAML, { now: NOW, nearLimitRatio: 0.5 });
    await ok(h, req('d', [desc({ ten: 'a' })], 6)); // near = 5: 6 - 5 = 1
    expect(h.counter(S('d.ten', 'near_limit'))).toBe(1);
  });

  it('requests_per_unit 0 blocks every request', async () => {
    const h = harness(YAML, { now: NOW });
    expect((await ok(h, req('d', [desc({ zero: 'x' })]))).overallCode).toBe(Code.OVER_LIMIT);
  });

  it('several descriptors: each evaluated, overall is the OR; unmatched ones are plain OK', async () => {
    const h = harness(YAML, { now: NOW });
    const r = await ok(h, req('d', [desc({ ten: 'a' }), desc({ zero: 'x' }), desc({ nothing: 'x' })]));
    expect(r.overallCode).toBe(Code.OVER_LIMIT);
    expect(r.statuses.map((s) => s.code)).toEqual([Code.OK, Code.OVER_LIMIT, Code.OK]);
    expect(r.statuses[2]).toEqual({ code: Code.OK, limitRemaining: 0 });
  });

  it('unlimited: OK with 4294967295 remaining, no limit, no backend key, no stats', async () => {
    const h = harness(YAML, { now: NOW });
    const r = await ok(h, req('d', [desc({ free: 'x' })]));
    expect(r.statuses[0]).toEqual({ code: Code.OK, limitRemaining: 4294967295 });
    expect(h.counter(S('d.free', 'total_hits'))).toBe(0);
  });

  it('replaces: the replaced rule is dropped and its counter untouched (also by an unlimited rule)', async () => {
    const h = harness(YAML, { now: NOW });
    let r = await ok(h, req('d', [desc({ old: 'x' }), desc({ new: 'x' })]));
    expect(r.statuses[0]).toEqual({ code: Code.OK, limitRemaining: 0 });
    expect(r.statuses[1]!.limitRemaining).toBe(4);
    r = await ok(h, req('d', [desc({ old: 'x' }), desc({ freeold: 'x' })]));
    expect(r.statuses[0]).toEqual({ code: Code.OK, limitRemaining: 0 });
    expect(h.counter(S('d.old', 'total_hits'))).toBe(0);
    // Alone, the old rule counts.
    r = await ok(h, req('d', [desc({ old: 'x' })]));
    expect(r.statuses[0]!.limitRemaining).toBe(0);
    expect(h.counter(S('d.old', 'total_hits'))).toBe(1);
  });

  it('rule shadow mode: OVER_LIMIT becomes OK and shadow_mode counts it', async () => {
    const h = harness(YAML, { now: NOW });
    await ok(h, req('d', [desc({ shadow: 'x' })]));
    const r = await ok(h, req('d', [desc({ shadow: 'x' })], 2));
    expect(r.overallCode).toBe(Code.OK);
    expect(r.statuses[0]!.code).toBe(Code.OK);
    expect(r.statuses[0]!.limitRemaining).toBe(0);
    expect(h.counter(S('d.shadow', 'shadow_mode'))).toBe(2);
    expect(h.counter(S('d.shadow', 'over_limit'))).toBe(2);
  });

  it('global SHADOW_MODE: overall OK, statuses keep OVER_LIMIT, global_shadow_mode counted', async () => {
    const h = harness(YAML, { now: NOW, globalShadowMode: true });
    const r = await ok(h, req('d', [desc({ zero: 'x' })]));
    expect(r.overallCode).toBe(Code.OK);
    expect(r.statuses[0]!.code).toBe(Code.OVER_LIMIT);
    expect(h.counter('ratelimit.service.global_shadow_mode')).toBe(1);
  });

  it('detailed_metric: stats keyed by the request value', async () => {
    const h = harness(YAML, { now: NOW });
    await ok(h, req('d', [desc({ det: 'v1' })]));
    expect(h.counter(S('d.det_v1', 'total_hits'))).toBe(1);
    expect(h.counter(S('d.det', 'total_hits'))).toBe(0);
  });

  it('limit override from the request replaces the rule; stats under the request key', async () => {
    const h = harness(YAML, { now: NOW });
    const r = await ok(h, req('d', [desc({ user: 'x' }, { limit: { requestsPerUnit: 42, unit: 3 } })]));
    expect(r.statuses[0]).toMatchObject({
      code: Code.OK,
      currentLimit: { requestsPerUnit: 42, unit: 3 },
      limitRemaining: 41,
    });
    expect(h.counter(S('d.user_x', 'total_hits'))).toBe(1);
  });

  it('unknown domain: OK without limit per descriptor and domain_not_found counted', async () => {
    const h = harness(YAML, { now: NOW });
    const r = await ok(h, req('nope', [desc({ user: 'x' }), desc({ user: 'y' })]));
    expect(r).toEqual({
      overallCode: Code.OK,
      statuses: [
        { code: Code.OK, limitRemaining: 0 },
        { code: Code.OK, limitRemaining: 0 },
      ],
      responseHeadersToAdd: [],
    });
    expect(h.counter('ratelimit.service.rate_limit.nope.domain_not_found')).toBe(2);
  });

  it('response headers describe the descriptor closest to its limit, or the over-limit one', async () => {
    const h = harness(YAML, { now: NOW, headers: true });
    let r = await ok(h, req('d', [desc({ ten: 'a' }), desc({ user: 'a' }), desc({ free: 'a' })]));
    expect(r.responseHeadersToAdd).toEqual([
      { key: 'RateLimit-Limit', value: '3' },
      { key: 'RateLimit-Remaining', value: '2' },
      { key: 'RateLimit-Reset', value: '40' },
    ]);
    r = await ok(h, req('d', [desc({ user: 'a' }), desc({ zero: 'a' })]));
    expect(r.responseHeadersToAdd[0]).toEqual({ key: 'RateLimit-Limit', value: '0' });
    expect(r.responseHeadersToAdd[2]).toEqual({ key: 'RateLimit-Reset', value: '1' });
    r = await ok(h, req('d', [desc({ nothing: 'a' })]));
    expect(r.responseHeadersToAdd).toEqual([]);
  });
});

describe('window lengths per unit (fixed, epoch-aligned windows)', () => {
  // The reference's lengths in seconds: a month is 30 days and a year 365, as in the Go service.
  const LENGTHS = [
    ['second', 1, 1],
    ['minute', 60, 2],
    ['hour', 3_600, 3],
    ['day', 86_400, 4],
    ['month', 2_592_000, 5],
    ['year', 31_536_000, 6],
    ['week', 604_800, 7],
  ] as const;
  it.each(LENGTHS)(
    '%s: %i s; the counter holds until the window ends, then starts fresh',
    async (unit, length, number) => {
      const yaml = `domain: w\ndescriptors:\n  - key: k\n    rate_limit: { unit: ${unit}, requests_per_unit: 1 }\n`;
      // Some way into a window of the unit (the clock is in seconds since the epoch).
      const start = 1_700_000_000 - (1_700_000_000 % 31_536_000) + 31_536_000 * 3;
      const now = start + Math.floor(length / 2);
      const h = harness(yaml, { now });
      const first = await ok(h, req('w', [desc({ k: 'v' })]));
      expect(first.overallCode).toBe(Code.OK);
      expect(first.statuses[0]!.currentLimit).toEqual({ requestsPerUnit: 1, unit: number });
      const windowEnd = (Math.floor(now / length) + 1) * length;
      expect(first.statuses[0]!.durationUntilResetSeconds).toBe(windowEnd - now);
      // The last second of the window: still over the limit.
      h.clock.now = windowEnd - 1;
      expect((await ok(h, req('w', [desc({ k: 'v' })]))).overallCode).toBe(Code.OVER_LIMIT);
      // The first second of the next window: a fresh counter, and a whole window until the next reset.
      h.clock.now = windowEnd;
      const fresh = await ok(h, req('w', [desc({ k: 'v' })]));
      expect(fresh.overallCode).toBe(Code.OK);
      expect(fresh.statuses[0]!.durationUntilResetSeconds).toBe(length);
    },
  );
});

describe('call errors (counted as service_error / redis_error)', () => {
  const cases: [string, Parameters<typeof req>, string][] = [
    ['empty domain', ['', [desc({ user: 'a' })]], 'rate limit domain must not be empty'],
    ['empty descriptor list', ['d', []], 'rate limit descriptor list must not be empty'],
    [
      'entry with empty key',
      ['d', [desc([['', 'v']])]],
      'rate limit descriptor 0 has an entry with an empty key',
    ],
    [
      'hits_addend overflow',
      ['d', [desc({ user: 'a' }, { hitsAddend: 2 ** 32 })]],
      'rate limit descriptor 0 hits_addend exceeds 4294967295',
    ],
    [
      'override with unit UNKNOWN',
      ['d', [desc({ user: 'a' }), desc({ user: 'a' }, { limit: { requestsPerUnit: 1, unit: 0 } })]],
      'rate limit descriptor 1 has a limit override with unit UNKNOWN',
    ],
  ];
  for (const [name, args, message] of cases) {
    it(name, async () => {
      const h = harness(YAML, { now: NOW });
      const result = await h.call(req(...args));
      expect(result).toEqual({ ok: false, error: { code: expect.any(String), message } });
      expect(h.counter('ratelimit.service.call.should_rate_limit.service_error')).toBe(1);
    });
  }

  it('no config loaded', async () => {
    const h = harness(undefined);
    expect(await h.call(req('d', [desc({ user: 'a' })]))).toEqual({
      ok: false,
      error: { code: 'no_config', message: 'no rate limit configuration loaded' },
    });
  });

  it('backend failure: error without internals, redis_error counted; fail-open and fail-closed modes', async () => {
    const h = harness(YAML, { now: NOW, backend: broken });
    expect(await h.call(req('d', [desc({ user: 'a' })]))).toEqual({
      ok: false,
      error: { code: 'backend', message: 'rate limit cache backend error' },
    });
    expect(h.counter('ratelimit.service.call.should_rate_limit.redis_error')).toBe(1);
    const open = harness(YAML, { now: NOW, backend: broken, failureMode: 'allow' });
    const r = await open.call(req('d', [desc({ user: 'a' })]));
    expect(r.ok && r.response.overallCode).toBe(Code.OK);
    const closed = harness(YAML, { now: NOW, backend: broken, failureMode: 'deny' });
    const c = await closed.call(req('d', [desc({ user: 'a' })]));
    expect(c.ok && c.response.overallCode).toBe(Code.OVER_LIMIT);
    // Unlimited and unmatched descriptors never reach the backend.
    const u = await h.call(req('d', [desc({ free: 'a' })]));
    expect(u.ok).toBe(true);
  });

  it('a backend failing on every call is logged once a second, not once a call; every call is counted', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
    const h = harness(YAML, { now: NOW, backend: broken, logger });
    for (let i = 0; i < 50; i++) await h.call(req('d', [desc({ user: `u${i}` })]));
    expect(h.counter('ratelimit.service.call.should_rate_limit.redis_error')).toBe(50);
    // One line, two if the machine stalled past the second during the loop.
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, msg: 'rate limit backend call failed' });
  });

  it('a store in this process that throws is a backend failure like a rejected round trip', async () => {
    const throwing: CounterBackend = {
      ...broken,
      incrementSync: () => {
        throw new Error('store broken');
      },
    };
    const h = harness(YAML, { now: NOW, backend: throwing });
    expect(h.service.shouldRateLimit(req('d', [desc({ user: 'a' })]))).toEqual({
      ok: false,
      error: { code: 'backend', message: 'rate limit cache backend error' },
    });
    expect(h.counter('ratelimit.service.call.should_rate_limit.redis_error')).toBe(1);
    const open = harness(YAML, { now: NOW, backend: throwing, failureMode: 'allow' });
    const r = await open.call(req('d', [desc({ user: 'a' }), desc({ ten: 'b' })]));
    expect(r.ok && r.response.statuses.map((s) => s.code)).toEqual([Code.OK, Code.OK]);
  });
});

/** `store` seen only through its asynchronous interface (no `incrementSync`). */
function asynchronousOnly(store: CounterBackend): CounterBackend {
  return {
    ...broken,
    description: `${store.description}, asynchronous only`,
    increment: (ops) => store.increment(ops),
    read: (ops) => store.read(ops),
  };
}

describe('the in-process store', () => {
  it('answers at once, without a promise, as the same store does through a promise', async () => {
    const direct = harness(YAML, { now: NOW });
    const viaPromise = harness(YAML, { now: NOW, backend: asynchronousOnly(direct.backend) });
    const asyncOnly = harness(YAML, {
      now: NOW,
      backend: asynchronousOnly(harness(YAML, { now: NOW }).backend),
    });
    for (let i = 0; i < 5; i++) {
      const request = req('d', [desc({ user: 'a' }), desc({ ten: 'b' }), desc({ free: 'c' })]);
      const answer = direct.service.shouldRateLimit(request);
      expect(answer).not.toBeInstanceOf(Promise);
      const later = asyncOnly.service.shouldRateLimit(request);
      expect(later).toBeInstanceOf(Promise);
      expect(answer).toEqual(await later);
    }
    const last = await direct.call(req('d', [desc({ user: 'a' })]));
    expect(last.ok && last.response.statuses[0]).toMatchObject({ code: Code.OVER_LIMIT, limitRemaining: 0 });
    expect(direct.counter('ratelimit.service.rate_limit.d.user.over_limit')).toBe(3);
    // Both ways count in the one store.
    await viaPromise.call(req('d', [desc({ ten: 'b' })]));
    const ten = await direct.call(req('d', [desc({ ten: 'b' })]));
    expect(ten.ok && ten.response.statuses[0]?.limitRemaining).toBe(10 - 7);
  });
});
