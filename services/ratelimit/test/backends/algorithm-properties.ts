import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/backends/memory.js';
import type { CounterBackend } from '../../src/backends/types.js';
import { Code } from '../../src/proto/messages.js';
import { desc, harness, ok, req } from '../helpers.js';

/**
 * Property tests of the sliding window and the token bucket, run through the whole decision path
 * (plan, limiter, backend, decision) on a backend under test with a clock the test drives:
 * random arrival times and hits_addends, then
 * - sliding window: no interval of the window's length holds more admitted hits than the limit,
 *   and a refusal is early by at most the oldest counted sub-window's count;
 * - token bucket: no interval of length L holds more than `burst + rate x L / window`;
 * - fixed window (with unit_multiplier): no aligned window holds more than the limit;
 * - and on a shared backend, exactly the decisions the in-process store makes for the same calls
 *   (the Redis script is the TypeScript step in Lua).
 * `PROPERTY_RUNS` sets the runs per property (default 40).
 */
export interface PropertyBackend {
  backend: CounterBackend;
  close(): Promise<void>;
}

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);

/**
 * The simulated clock of the run in progress, for in-process stores' expiry. Keys carry a jitter of
 * about 300 s (real seconds on Redis), so no state expires while it still matters in either store.
 */
export const propertyClock = { ms: 0 };

interface Scenario {
  algorithm: 'sliding_window' | 'token_bucket' | 'fixed_window';
  limit: number;
  burst: number;
  unit: 'second' | 'minute';
  multiplier: number;
  subWindows: number;
  startMs: number;
  calls: { gapPermille: number; hits: number }[];
}

interface Call {
  atMs: number;
  hits: number;
  admitted: boolean;
  remaining: number;
  resetMs: number;
}

const scenario = (algorithm: Scenario['algorithm']): fc.Arbitrary<Scenario> =>
  fc.record({
    algorithm: fc.constant(algorithm),
    limit: fc.integer({ min: 1, max: 12 }),
    burst: fc.integer({ min: 1, max: 15 }),
    unit: fc.constantFrom('second' as const, 'minute' as const),
    multiplier: fc.integer({ min: 1, max: 3 }),
    subWindows: fc.constantFrom(2, 5, 10),
    startMs: fc.integer({ min: 0, max: 3_600_000 }),
    calls: fc.array(
      fc.record({
        // Gaps in thousandths of the window: mostly dense traffic, sometimes a long pause.
        gapPermille: fc.oneof(fc.integer({ min: 0, max: 80 }), fc.integer({ min: 0, max: 1500 })),
        hits: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 16 })),
      }),
      { minLength: 1, maxLength: 50 },
    ),
  });

function windowMs(s: Scenario): number {
  return (s.unit === 'second' ? 1000 : 60_000) * s.multiplier;
}

function yaml(s: Scenario): string {
  const burst = s.algorithm === 'token_bucket' ? `, burst: ${s.burst}` : '';
  return `domain: p\ndescriptors:\n  - key: k\n    rate_limit: { unit: ${s.unit}, unit_multiplier: ${s.multiplier}, requests_per_unit: ${s.limit}, algorithm: ${s.algorithm}${burst} }\n`;
}

/** Runs the scenario's calls on `backend`; the clock starts at an arbitrary ms of the epoch. */
async function run(s: Scenario, backend: CounterBackend): Promise<Call[]> {
  const h = harness(yaml(s), {
    backend,
    subWindows: s.subWindows,
    expirationJitterMaxSeconds: 300,
    random: () => 0.999,
  });
  const value = randomUUID();
  let at = 1_700_000_000_000 + s.startMs;
  const out: Call[] = [];
  const w = windowMs(s);
  for (const c of s.calls) {
    at += Math.floor((c.gapPermille * w) / 1000);
    h.clock.ms = at;
    h.clock.now = Math.floor(at / 1000);
    propertyClock.ms = at;
    const r = await ok(h, req('p', [desc({ k: value }, { hitsAddend: c.hits })]));
    const status = r.statuses[0]!;
    out.push({
      atMs: at,
      hits: c.hits,
      admitted: status.code === Code.OK,
      remaining: status.limitRemaining,
      resetMs: (status.durationUntilResetSeconds ?? 0) * 1000 + (status.durationUntilResetNanos ?? 0) / 1e6,
    });
  }
  return out;
}

function admittedIn(calls: readonly Call[], fromMs: number, toMs: number): number {
  let sum = 0;
  for (const c of calls) if (c.admitted && c.atMs >= fromMs && c.atMs <= toMs) sum += c.hits;
  return sum;
}

function checkSlidingWindow(s: Scenario, calls: readonly Call[]): void {
  const w = windowMs(s);
  const sub = w / s.subWindows;
  for (const c of calls) {
    // Every interval of the window's length that can hold the most ends at an admitted call.
    if (c.admitted) expect(admittedIn(calls, c.atMs - w + 1, c.atMs)).toBeLessThanOrEqual(s.limit);
    if (!c.admitted && c.hits <= s.limit) {
      // Refused early by at most the oldest counted sub-window's count.
      const oldest = Math.floor(c.atMs / sub) - s.subWindows;
      const inOldest = admittedIn(calls, oldest * sub, (oldest + 1) * sub - 1);
      const exact = admittedIn(calls, c.atMs - w + 1, c.atMs);
      expect(exact + inOldest + c.hits).toBeGreaterThan(s.limit);
    }
  }
}

function checkTokenBucket(s: Scenario, calls: readonly Call[]): void {
  const w = windowMs(s);
  const admitted = calls.filter((c) => c.admitted && c.hits > 0);
  for (let i = 0; i < admitted.length; i++) {
    for (let j = i; j < admitted.length; j++) {
      const from = admitted[i]!.atMs;
      const to = admitted[j]!.atMs;
      const bound = s.burst + Math.floor((s.limit * (to - from)) / w);
      expect(admittedIn(calls, from, to)).toBeLessThanOrEqual(bound);
    }
  }
  for (const c of calls) expect(c.remaining).toBeLessThanOrEqual(s.burst);
}

function checkFixedWindow(s: Scenario, calls: readonly Call[]): void {
  const w = windowMs(s) / 1000;
  const byWindow = new Map<number, number>();
  for (const c of calls) {
    if (!c.admitted) continue;
    const start = Math.floor(Math.floor(c.atMs / 1000) / w);
    byWindow.set(start, (byWindow.get(start) ?? 0) + c.hits);
  }
  for (const sum of byWindow.values()) expect(sum).toBeLessThanOrEqual(s.limit);
}

const CHECKS = {
  sliding_window: checkSlidingWindow,
  token_bucket: checkTokenBucket,
  fixed_window: checkFixedWindow,
} as const;

export function algorithmProperties(
  name: string,
  open: () => Promise<PropertyBackend>,
  options: { compareWithMemory: boolean },
): void {
  describe(`algorithm properties: ${name}`, () => {
    let t: PropertyBackend;
    beforeAll(async () => {
      t = await open();
      expect(await t.backend.ready()).toBe(true);
    });
    afterAll(async () => {
      await t.close();
    });

    for (const algorithm of ['sliding_window', 'token_bucket', 'fixed_window'] as const) {
      it(`${algorithm}: the bound holds for random arrivals and hits_addends${options.compareWithMemory ? ', with the in-process store’s decisions' : ''}`, async () => {
        await fc.assert(
          fc.asyncProperty(scenario(algorithm), async (s) => {
            const calls = await run(s, t.backend);
            CHECKS[algorithm](s, calls);
            if (options.compareWithMemory && algorithm !== 'fixed_window') {
              const memory = new MemoryBackend({ now: () => propertyClock.ms });
              try {
                expect(await run(s, memory)).toEqual(calls);
              } finally {
                await memory.close();
              }
            }
          }),
          { numRuns: RUNS },
        );
      });
    }
  });
}
